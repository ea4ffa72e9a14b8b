"""A torchvision-style residual network (fixtures/styles/residual_cnn.py), written as users write
one: stages built by a `_make_layer` helper that appends blocks, a downsampling Sequential chosen by
a condition on a class attribute (`BasicBlock.expansion`, read off the class), a max-pooled stem and
adaptive average pooling. Totals equal FlopCounterMode in both modes on image sizes that do and do
not divide by the strides."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import residual_cnn  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(residual_cnn.__file__)


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("side", [32, 45])
def test_resnet_totals_equal_flop_counter_mode(tmp_path, capsys, side, mode):
    result = model_record(tmp_path, capsys, {"N": 2}, f"{FIXTURE}:ResNet.forward", {"x": f"float32 N 3 {side} {side}"},
                          mode)
    torch.manual_seed(0)
    expected = counted_flops(residual_cnn.ResNet(), torch.randn(2, 3, side, side), training=mode == "training")
    assert result["complete"] and result["totals"]["flops"] == expected


def test_resnet_parameters_equal_the_modules(tmp_path, capsys):
    """`conv3x3(c, c)` called for each block builds a module each time (a call's memo never hands
    the same module object to two blocks), so every block's parameters count."""
    result = model_record(tmp_path, capsys, {"N": 2}, f"{FIXTURE}:ResNet.forward", {"x": "float32 N 3 32 32"},
                          "training")
    assert result["totals"]["memory"]["parameters"] == 4 * sum(p.numel() for p in residual_cnn.ResNet().parameters())
