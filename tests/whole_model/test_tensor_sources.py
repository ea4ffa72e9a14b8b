"""Tensors made by torch's factories and library layers inside a model (fixtures/styles/tensor_sources.py):
`torch.normal` parameters, ... Each total is held against torch's FlopCounterMode running the same class."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import tensor_sources  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(tensor_sources.__file__)
DIMS = {"dim": 16, "B": 2, "T": 8}
CLASSES = ("ScaledResidual",)


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("cls", CLASSES)
def test_totals_equal_flop_counter_mode(tmp_path, capsys, cls, mode):
    record = model_record(tmp_path, capsys, DIMS, f"{FIXTURE}:{cls}.forward", {"x": "float32 B T dim"}, mode)
    torch.manual_seed(0)
    model = getattr(tensor_sources, cls)(DIMS["dim"])
    expected = counted_flops(model, torch.randn(DIMS["B"], DIMS["T"], DIMS["dim"]), training=mode == "training")
    assert record["totals"]["flops"] == expected
    assert record["complete"] is True, (record["sites"], record["not_followed"])
