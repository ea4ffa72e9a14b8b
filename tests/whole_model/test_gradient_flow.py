"""Training counts the backward of what the returned value depends on, as autograd does: a value
computed and dropped has no backward; a tensor updated in place (`h += f(x)`) needs a gradient."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.whole_model.model_runs import counted_flops, model_record

torch = pytest.importorskip("torch")
FIXTURE = Path(__file__).parent / "fixtures" / "dropped_branch.py"


def _model():
    spec = importlib.util.spec_from_file_location("dropped_branch", FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the test runs the reference model; the tool never does
    return module.PooledBlock()


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_dropped_branch_has_no_backward_and_an_in_place_sum_has_one(tmp_path, capsys, mode):
    record = model_record(tmp_path, capsys, {"batch": 4}, f"{FIXTURE}:PooledBlock.forward",
                          {"x": "float32 batch 64"}, mode=mode)
    expected = counted_flops(_model(), torch.randn(4, 64), training=mode == "training")
    assert record["totals"]["flops"] == expected
    modules = {m["path"]: m for m in record["modules"]}
    if mode == "training":
        assert modules["pooler"]["flops"] == 2 * 4 * 64 * 64  # its forward only
        assert modules["mixer"]["flops"] == 3 * 2 * 4 * 64 * 64  # forward + both gradients
