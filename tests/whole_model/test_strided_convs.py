"""Strided convolutions whose sizes do not divide: the output size is torch's floor, a padding of 0
included (fixtures/styles/strided_convs.py), held against FlopCounterMode."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import strided_convs  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(strided_convs.__file__)


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("side", [8, 11, 16])
def test_floored_output_sizes_equal_flop_counter_mode(tmp_path, capsys, side, mode):
    result = model_record(tmp_path, capsys, {"B": 2}, f"{FIXTURE}:Stem.forward", {"x": f"float32 B 3 {side} {side}"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(strided_convs.Stem(), torch.randn(2, 3, side, side), training=mode == "training")
    assert result["complete"] and result["totals"]["flops"] == expected
