"""Window pooling (`nn.MaxPool2d`, `nn.AvgPool2d` with ceil_mode, `nn.MaxPool1d` returning indices,
`F.max_pool2d`, `F.avg_pool2d`) flows shapes as torch computes them: whole-model totals equal
FlopCounterMode on image sizes that do and do not divide (fixtures/styles/window_pooling.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import window_pooling  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(window_pooling.__file__)


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("side", [16, 23, 30])
def test_pooled_sizes_equal_flop_counter_mode(tmp_path, capsys, side, mode):
    result = model_record(tmp_path, capsys, {"B": 2}, f"{FIXTURE}:Classifier.forward",
                          {"x": f"float32 B 3 {side} {side}"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(window_pooling.Classifier(), torch.randn(2, 3, side, side), training=mode == "training")
    assert result["complete"] and result["totals"]["flops"] == expected
    assert result["not_followed"] == [] and result["unresolved_sites"] == 0


def test_pooling_modules_hold_no_parameters(tmp_path, capsys):
    result = model_record(tmp_path, capsys, {"B": 2}, f"{FIXTURE}:Classifier.forward",
                          {"x": "float32 B 3 16 16"}, "training")
    expected = 4 * sum(p.numel() for p in window_pooling.Classifier().parameters())
    assert result["totals"]["memory"]["parameters"] == expected
