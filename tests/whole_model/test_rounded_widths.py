"""Widths computed from floats (fixtures/styles/rounded_widths.py) are the ints Python computes:
`int(v + divisor / 2) // divisor * divisor` with `/` of two ints a float, `max(floor, ...)`, the
10% check `rounded < keep * value`, `int(dim * 2.5)`, `round(depth * 1.25)` (halves to even) and
`float("0.25")`; one helper called for each stage with a different float is a different call
(never one memoised answer for all). The totals are held against FlopCounterMode; a multiplier
drawn at run time leaves the widths unknown (a partial total, never a wrong one)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import rounded_widths  # noqa: E402
from tests.whole_model.model_runs import built_record, counted_flops  # noqa: E402

FIXTURE = Path(rounded_widths.__file__)
BATCH, SIDE = 2, 16


def _record(tmp_path, capsys, build: str, mode: str) -> dict:
    return built_record(tmp_path, capsys, FIXTURE, build, {"batch": BATCH},
                        {"x": f"float32 batch 3 {SIDE} {SIDE}"}, mode)


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_float_computed_widths_equal_flop_counter_mode(tmp_path, capsys, mode):
    record = _record(tmp_path, capsys, "build_scaled()", mode)
    torch.manual_seed(0)
    model = rounded_widths.build_scaled()
    # the widths the floats give: 24 stem (0.75 * 32), stages 24/32/64 (18.0 rounds down to 16,
    # then up past the 10% check), gates 8/8/16 (0.25 * width rounded to the divisor), 1/2/2
    # blocks (round(1.25) is 1, round(2.5) is 2), an MLP of int(64 * 2.5) = 160
    assert [m.out_channels for m in model.modules() if isinstance(m, torch.nn.Conv2d)][:3] == [24, 24, 8]
    assert model.head.fc1.out_features == 160 and len(model.stages[0].layers) == 2
    expected = counted_flops(model, torch.randn(BATCH, 3, SIDE, SIDE), training=mode == "training")
    assert record["complete"] is True, record.get("unresolved_sites")
    assert record["totals"]["flops"] == expected


def test_a_multiplier_drawn_at_run_time_leaves_the_widths_unknown(tmp_path, capsys):
    record = _record(tmp_path, capsys, "build_unknown_multiplier()", "inference")
    assert record["complete"] is False
    lost = [site["shape_lost_at"] for site in record["sites"] if site.get("shape_lost_at")]
    assert lost and lost[0]["expression"] == "self.stem(x)"
