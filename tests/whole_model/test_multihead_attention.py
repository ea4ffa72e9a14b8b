"""`nn.MultiheadAttention` as its forward runs (fixtures/styles/multihead_attention.py): the input
projections, the attention (two bmm with the weights, one fused attention without) and the output
projection, in batch-first and sequence-first layouts, with cross-attention of other widths, learned
key/value biases and a zero-attention column; whole-model totals equal FlopCounterMode in both
modes (the fused CPU kernel counted by flop_counter's own SDPA formula, as the other SDPA tests do),
and its parameters equal the module's."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from tests.whole_model.fixtures.styles import multihead_attention  # noqa: E402
from tests.whole_model.model_runs import model_record  # noqa: E402
from tests.whole_model.test_model_styles import FUSED_SDPA_ON_CPU  # noqa: E402

FIXTURE = Path(multihead_attention.__file__)
CASES = {"EncoderBlock": "float32 B T 32", "CrossDecoder": "float32 B T 8", "FusedBlock": "float32 B T 32"}


def _reference(cls, shape, training: bool) -> int:
    torch.manual_seed(0)
    model = getattr(multihead_attention, cls)()
    model.train(training)
    with FlopCounterMode(display=False, custom_mapping=FUSED_SDPA_ON_CPU) as counter:
        out = model(torch.randn(*shape))
        if training:
            out.sum().backward()
    return counter.get_total_flops()


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("cls", sorted(CASES))
def test_totals_equal_flop_counter_mode(tmp_path, capsys, cls, mode):
    result = model_record(tmp_path, capsys, {"B": 2, "T": 10}, f"{FIXTURE}:{cls}.forward", {"x": CASES[cls]}, mode)
    width = 32 if CASES[cls].endswith("32") else 8
    assert result["complete"], (result["not_followed"], [s for s in result["sites"] if not s["resolved"]])
    assert result["totals"]["flops"] == _reference(cls, (2, 10, width), mode == "training")


@pytest.mark.parametrize("cls", sorted(CASES))
def test_parameters_equal_the_modules(tmp_path, capsys, cls):
    result = model_record(tmp_path, capsys, {"B": 2, "T": 10}, f"{FIXTURE}:{cls}.forward", {"x": CASES[cls]},
                          "training")
    model = getattr(multihead_attention, cls)()
    assert result["totals"]["memory"]["parameters"] == 4 * sum(p.numel() for p in model.parameters())


def test_the_attention_costs_are_the_modules(tmp_path, capsys):
    """The module tree puts the projections and the attention under the attention module."""
    result = model_record(tmp_path, capsys, {"B": 2, "T": 10}, f"{FIXTURE}:EncoderBlock.forward",
                          {"x": "float32 B T 32"}, "inference")
    flops = {row["path"]: row["flops"] for row in result["modules"]}
    # 3 projections and the output projection: 4 * 2*B*T*E*E; scores and mixing: 2 * 2*(B*H)*T*T*(E/H)
    assert flops["attn"] == 4 * 2 * 20 * 32 * 32 + 2 * 2 * 8 * 10 * 10 * 8


def test_an_unreadable_switch_leaves_the_total_partial(tmp_path, capsys):
    source = tmp_path / "switch.py"
    source.write_text(
        "from torch import nn\n\n\nclass Block(nn.Module):\n"
        "    def __init__(self, weights):\n        super().__init__()\n"
        "        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)\n        self.weights = weights\n\n"
        "    def forward(self, x):\n        out, _ = self.attn(x, x, x, need_weights=self.weights)\n        return out\n")
    result = model_record(tmp_path, capsys, {"B": 2, "T": 4}, f"{source}:Block.forward", {"x": "float32 B T 16"},
                          "inference")
    assert not result["complete"]
    assert any("need_weights" in (site["reason"] or "") for site in result["sites"])
