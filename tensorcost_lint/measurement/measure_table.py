"""`measure` output: the modelled-vs-observed table (text) and the same data as JSON.

The JSON is what `report --measurements` reads to put measured points beside modelled ones.
"""

from __future__ import annotations

import json
from decimal import Decimal

from estimator.units import format_flops, format_seconds

from .measure_runs import VIOLATED, summary_counts


def _seconds(value) -> str:
    return "-" if value is None else format_seconds(Decimal(repr(float(value))))


def _ratio(value) -> str:
    return "-" if value is None else (f"{value:.2f}x" if value < 100 else f"{value:.0f}x")


def table_rows(measurements) -> list[list[str]]:
    rows = []
    for m in measurements:
        w = m.workload
        status = m.status if not m.reason or m.status == VIOLATED else f"{m.status}: {m.reason}"
        shapes = w.shapes_text + (f" {w.operand_dtype}" if w.operand_dtype else "")
        if w.executions != 1:
            shapes += f" ×{w.executions}"
        rows.append([str(w.id), w.location, w.operation, shapes, "-" if w.flops is None else format_flops(w.flops),
                     _seconds(w.lower_bound_seconds), _seconds(m.timing.median if m.timing else None),
                     _ratio(m.ratio), w.bottleneck or "-", status])
    return rows


HEADERS = ["#", "location", "operation", "shapes", "FLOPs", "bound", "measured", "ratio", "bottleneck", "status"]


def render_table(headers, rows, *, wrap_last: bool = True) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    if wrap_last:
        widths[-1] = len(headers[-1])
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    return lines


def render_measure_text(measurements, header: list[str], warnings: list[str]) -> str:
    lines = list(header) + [f"warning: {w}" for w in warnings]
    lines += [""] + render_table(HEADERS, table_rows(measurements))
    counts = summary_counts(measurements)
    timed = sum(counts[k] for k in ("held", VIOLATED, "no bound"))
    lines.append("")
    lines.append(f"{timed} measured: {counts['held']} held the bound, {counts[VIOLATED]} EVIDENCE VIOLATED, "
                 f"{counts['no bound']} without a bound; {counts['skipped']} skipped, {counts['failed']} failed")
    ratios = [m.ratio for m in measurements if m.ratio is not None]
    if ratios:
        ratios.sort()
        lines.append(f"measured/bound: min {_ratio(ratios[0])}, median {_ratio(ratios[len(ratios) // 2])}, "
                     f"max {_ratio(ratios[-1])} (1.00x would be a run at the bound)")
    return "\n".join(lines) + "\n"


def _float(value):
    return None if value is None else float(value)


def measurement_record(m) -> dict:
    w, t = m.workload, m.timing
    return {
        "id": w.id, "path": w.path, "line": w.line, "column": w.column, "location": w.location,
        "operation": w.operation, "framework": w.framework, "expression": w.expression,
        "operand_shapes": [list(s) for s in w.operand_shapes], "dtype": w.operand_dtype,
        "output_dtype": w.output_dtype, "accumulation_dtype": w.accumulation_dtype, "executions": w.executions,
        "kernel": m.kernel, "flops": w.flops, "traffic_bytes": w.traffic_bytes,
        "arithmetic_intensity": _float(w.arithmetic_intensity), "hardware": w.hardware_id,
        "lower_bound_seconds": _float(w.lower_bound_seconds), "bottleneck": w.bottleneck,
        "measured_median_seconds": t.median if t else None, "measured_best_seconds": t.best if t else None,
        "spread": t.spread if t else None, "repeats": t.repeats if t else None, "warmup": t.warmup if t else None,
        "ratio": m.ratio, "status": m.status, "reason": m.reason, "plan_id": w.plan_id,
    }


def render_measure_json(measurements, context: dict, warnings: list[str]) -> str:
    counts = summary_counts(measurements)
    data = {"version": 1, **context, "warnings": warnings,
            "summary": {k.lower().replace(" ", "_"): v for k, v in counts.items()},
            "measurements": [measurement_record(m) for m in measurements]}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
