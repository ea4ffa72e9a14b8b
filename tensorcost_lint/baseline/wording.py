"""Costs and ratios with units, as the TCL601 message and the pull-request table print them."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction

from estimator.units import format_bytes, format_flops, format_seconds

METRIC_NAMES = {"flops": "FLOPs", "output_bytes": "output bytes", "traffic_bytes": "traffic",
                "lower_bound_seconds": "lower bound", "forward_flops": "forward FLOPs",
                "backward_flops": "backward FLOPs", "peak_retained_bytes": "peak retained bytes"}


def format_value(metric: str, value) -> str:
    if metric.endswith("flops"):
        return format_flops(value)
    if metric == "lower_bound_seconds":
        return format_seconds(value)
    return format_bytes(value)


def format_ratio(ratio: Fraction | None) -> str:
    """`×2.0`, `×1.04`, `×0.5`: two decimals, trailing zeros dropped but one kept; `new` from zero."""
    if ratio is None:
        return "from 0"
    value = (Decimal(ratio.numerator) / Decimal(ratio.denominator)).quantize(Decimal("0.01"), ROUND_HALF_EVEN)
    text = f"{value:f}".rstrip("0")
    return "×" + (text + "0" if text.endswith(".") else text)


def format_percent(fraction: Decimal) -> str:
    text = f"{fraction * 100:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text + "%"
