"""Python numbers and small torch ops that model code computes tables and scales with
(tests/whole_model/fixtures/styles/numeric_tables.py): each case's contractions keep their shapes
only when the analysis follows what Python and torch do there, and its totals are held against
FlopCounterMode on the same class."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import numeric_tables  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(numeric_tables.__file__)
BATCH, STEPS, DIM = 2, 5, 16
CASES = ["PeriodScaled", "OffsetPositions", "RampScaled", "SinkScores", "ParameterReads", "OutputSubclass"]


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("cls", CASES)
def test_totals_equal_flop_counter_mode(tmp_path, capsys, cls, mode):
    torch.manual_seed(0)
    model = getattr(numeric_tables, cls)()
    expected = counted_flops(model, torch.randn(BATCH, STEPS, DIM), training=mode == "training")
    record = model_record(tmp_path, capsys, {"B": BATCH, "T": STEPS}, f"{FIXTURE}:{cls}.forward",
                          {"x": f"float32 B T {DIM}"}, mode)
    assert record["totals"]["flops"] == expected
    assert record["complete"] is True, [s for s in record["sites"] if not s["resolved"]]


def test_a_float_set_on_undecided_sides_is_not_picked(tmp_path, capsys):
    """`ratio` is 0.25 on one side of an undecided `if`, 0.5 on the other: the width `int(dim *
    ratio)` is unknown, so the linear is unresolved — never costed with the first side's 0.25
    (FlopCounterMode, with the default options, counts the 0.5 side)."""
    record = model_record(tmp_path, capsys, {"B": BATCH, "T": STEPS}, f"{FIXTURE}:UndecidedRatio.forward",
                          {"x": f"float32 B T {DIM}"})
    expected = counted_flops(numeric_tables.UndecidedRatio(), torch.randn(BATCH, STEPS, DIM), training=False)
    assert expected == 2 * BATCH * STEPS * DIM * DIM // 2
    assert record["complete"] is False and record["unresolved_sites"] == 1 and record["totals"]["flops"] == 0
