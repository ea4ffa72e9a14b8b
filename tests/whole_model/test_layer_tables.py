"""A class table keyed by tuples of bools, module lists sliced by known ints (a step, a negative
start, an empty slice past the end), and `range(1, n)` passes whose body reads the index
(fixtures/styles/layer_tables.py), held against FlopCounterMode for several schedules."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import layer_tables  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(layer_tables.__file__)
SCHEDULES = {  # depth, loop_start, loop_end, passes
    "defaults": (5, 1, 4, 3),
    "loop-past-the-end": (2, 6, 18, 3),
    "one-pass": (4, 1, 4, 1),
}


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_totals_equal_flop_counter_mode(tmp_path, capsys, schedule, mode):
    depth, start, end, passes = SCHEDULES[schedule]
    dims = {"B": 2, "T": 3, "dim": 8, "depth": depth, "loop_start": start, "loop_end": end, "passes": passes}
    result = model_record(tmp_path, capsys, dims, f"{FIXTURE}:Looped.forward", {"x": "float32 B T 8"}, mode)
    torch.manual_seed(0)
    model = layer_tables.Looped(8, depth, start, end, passes)
    expected = counted_flops(model, torch.randn(2, 3, 8), training=mode == "training")
    assert result["complete"], [site for site in result["sites"] if not site["resolved"]] + result["not_followed"]
    assert result["totals"]["flops"] == expected
