"""A float's truth decides which layers exist (fixtures/styles/float_switches.py): config.json's
`dropout_p: 0.0` is false (no dropout layer), `residual_scale: 0.5` true, and `0.5 - 0.5` false.
The totals are held against FlopCounterMode on the same class and config."""

import json
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.styles.float_switches import SwitchedBlock  # noqa: E402
from tests.whole_model.model_runs import counted_flops  # noqa: E402

FIXTURE = "tests/whole_model/fixtures/styles/float_switches.py"
SETTINGS = {"hidden": 16, "dropout_p": 0.0, "residual_scale": 0.5}
BATCH, STEPS = 2, 8


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_float_settings_decide_the_layers(tmp_path, capsys, mode):
    (tmp_path / "config.json").write_text(json.dumps(SETTINGS))
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {{B: {BATCH}, T: {STEPS}}}\n")
    entry = f"{(tmp_path.cwd() / FIXTURE).as_posix()}:SwitchedBlock.forward"
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", entry, "--input", "x=float32 B T hidden",
            "--dims-from", str(tmp_path / "config.json"), "--mode", mode, "--format", "json"]
    assert main(argv) == 0
    record = json.loads(capsys.readouterr().out)["models"][0]
    model = SwitchedBlock(SimpleNamespace(**SETTINGS))
    expected = counted_flops(model, torch.randn(BATCH, STEPS, SETTINGS["hidden"]), training=mode == "training")
    linear = 2 * BATCH * STEPS * 16 * 16
    # two linears run (attn, rescale); in training attn's backward is its weight's only (x needs none)
    assert expected == (2 * linear if mode == "inference" else (2 + 3) * linear)
    assert record["totals"]["flops"] == expected
    assert record["complete"] is True and record["undecided"] == []
