"""Modes a forward enters with `with` (values/execution_modes.py): what runs under `no_grad` has no
backward, `enable_grad` turns it back on, a context chosen per loop step decides each step, and one
the run cannot decide leaves the total partial; `torch.is_autocast_enabled(device)` is whether an
autocast the run entered for that device is on — the totals held against FlopCounterMode."""

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.styles import autocast_checks, grad_modes  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = "tests/whole_model/fixtures/styles/grad_modes.py"
BATCH, DIM = 2, 16


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("name", ["WarmStart", "LastStepsLearn", "ReEnabled", "Switched"])
def test_grad_modes_cost_the_backward_torch_runs(tmp_path, capsys, name, mode):
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{FIXTURE}:{name}.forward", {"x": f"float32 B {DIM}"}, mode)
    training = mode == "training"
    reference = counted_flops(getattr(grad_modes, name)(), torch.randn(BATCH, DIM), training=training)
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True


def test_a_grad_mode_the_run_cannot_decide_is_partial(tmp_path, capsys):
    source = tmp_path / "undecided.py"
    source.write_text("import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
                      "    def __init__(self, dim=16):\n        super().__init__()\n"
                      "        self.lin = nn.Linear(dim, dim)\n\n"
                      "    def forward(self, x, flag: bool):\n"
                      "        with torch.set_grad_enabled(flag):\n            return self.lin(x)\n")
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{source}:Net.forward", {"x": f"float32 B {DIM}"},
                          "training")
    assert record["complete"] is False
    assert "gradients are enabled" in record["not_followed"][0]["reason"]


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_autocast_checks_decide_their_branches(tmp_path, capsys, mode):
    entry = "tests/whole_model/fixtures/styles/autocast_checks.py:AutocastBranches.forward"
    record = model_record(tmp_path, capsys, {"B": BATCH}, entry, {"x": f"float32 B {DIM}"}, mode)
    reference = counted_flops(autocast_checks.AutocastBranches(), torch.randn(BATCH, DIM), training=mode == "training")
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True and record["undecided"] == []
