"""Tensors made by torch's factories and library layers inside a model (fixtures/styles/tensor_sources.py):
`torch.normal` parameters, an nn.Embedding subclass reading its own weight (rows by position id, a
run of rows from an offset), a head tied to a token table's weight, and `torch.arange` from a start, by
a step, counting down and by keyword; a list of state tensors made by a comprehension of `torch.zeros`
over `range`, indexed by layers whose number is the comprehension's index and written in place. Each total is held against torch's FlopCounterMode running the same class."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import tensor_sources  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(tensor_sources.__file__)
DIMS = {"dim": 16, "B": 2, "T": 8}
# class -> (input spec, the input torch runs on)
CLASSES = {
    "ScaledResidual": ("float32 B T dim", lambda: torch.randn(DIMS["B"], DIMS["T"], DIMS["dim"])),
    "LearnedPositions": ("int64 B T", lambda: torch.randint(0, 24, (DIMS["B"], DIMS["T"]))),
    "PromptedTokens": ("int64 B T", lambda: torch.randint(0, 40, (DIMS["B"], DIMS["T"]))),
    "LayerStates": ("float32 B T dim", lambda: torch.randn(DIMS["B"], DIMS["T"], DIMS["dim"])),
}


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("cls", sorted(CLASSES))
def test_totals_equal_flop_counter_mode(tmp_path, capsys, cls, mode):
    spec, make_input = CLASSES[cls]
    parameter = "ids" if spec.startswith("int") else "x"
    record = model_record(tmp_path, capsys, DIMS, f"{FIXTURE}:{cls}.forward", {parameter: spec}, mode)
    torch.manual_seed(0)
    model = getattr(tensor_sources, cls)(DIMS["dim"])
    expected = counted_flops(model, make_input(), training=mode == "training")
    assert record["totals"]["flops"] == expected
    assert record["complete"] is True, (record["sites"], record["not_followed"])


def test_a_range_over_an_anonymous_length_stays_unknown():
    """`_, n, _ = x.size()` of an x of unknown shape names its dims `_`, which no polynomial holds
    inside a division: `torch.arange(1, n // 2)` has no known length (it once raised and failed the
    whole run)."""
    from shape_annotations import BinOp, Const, Sym

    from tensorcost_lint.whole_model.library.torch_values import _range_length

    half = BinOp("//", Sym("_"), Const(2))
    assert _range_length(Const(1), half, 1, {"seq": 8}) is None
    assert _range_length(Const(0), half, 1, {"seq": 8}) == half  # from 0: the length is the bound
