"""Shared wording for rule messages: shapes with sizes, bytes with units, budgets as written."""

from __future__ import annotations

from decimal import Decimal

from estimator.units import format_bytes, format_bytes_binary, format_flops, format_seconds
from shape_annotations import render_dim

from ..analysis.site_shapes import shape_text


def budget_text(value: int) -> str:
    """A budget as users write it (`256 MiB`) when it is a binary size, with the SI size beside."""
    for unit in (2**40, 2**30, 2**20, 2**10):
        if value % unit == 0:
            return f"{format_bytes_binary(value)} ({format_bytes(value)})"
    return format_bytes(value)


def sized_shape(shape, sizes) -> str:
    """`[B=12, nh=12, T=1024, T=1024]` — names with their bound sizes."""
    from shape_annotations import ShapeError, evaluate_dim

    parts = []
    for dim in shape:
        text = render_dim(dim)
        try:
            value = evaluate_dim(dim, sizes)
        except ShapeError:
            value = None
        parts.append(f"{text}={value}" if value is not None and text != str(value) else text)
    return "[" + ", ".join(parts) + "]"


def growth_text(polynomial, names) -> str | None:
    """`×4 when T doubles` for the first named dim the polynomial grows super-linearly in."""
    if polynomial is None:
        return None
    best = None
    for name in names:
        degree = polynomial.degree(name)
        if degree >= 2 and (best is None or degree > best[1]):
            best = (name, degree)
    if best is None:
        return None
    return f"×{2 ** best[1]} when {best[0]} doubles"


__all__ = ["budget_text", "sized_shape", "growth_text", "format_bytes", "format_flops", "format_seconds",
           "shape_text", "Decimal"]
