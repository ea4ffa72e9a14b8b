"""Shared wording for rule messages: shapes with sizes, bytes with units, budgets as written."""

from __future__ import annotations

from decimal import Decimal

from estimator.units import format_bytes, format_bytes_binary, format_flops, format_seconds
from estimator import INDEX_LETTERS
from shape_annotations import ShapeError, evaluate_dim, render_dim


def shape_text(shape) -> str:
    """`[B, nh, T, hs]`."""
    return "[" + ", ".join(render_dim(d) for d in shape) + "]"


def budget_text(value: int) -> str:
    """A budget as users write it (`256 MiB`) when it is a binary size, with the SI size beside."""
    for unit in (2**40, 2**30, 2**20, 2**10):
        if value % unit == 0:
            return f"{format_bytes_binary(value)} ({format_bytes(value)})"
    return format_bytes(value)


def sized_dim(dim, sizes) -> str:
    """`T=1024` — a dim's name with its bound size (just the number for a constant)."""
    text = render_dim(dim)
    try:
        value = evaluate_dim(dim, sizes)
    except ShapeError:
        value = None
    return f"{text}={value}" if value is not None and text != str(value) else text


def sized_shape(shape, sizes) -> str:
    """`[B=12, nh=12, T=1024, T=1024]` — names with their bound sizes."""
    return "[" + ", ".join(sized_dim(dim, sizes) for dim in shape) + "]"


def _in_user_names(text: str, fact) -> str:
    """einops: the pattern and axis names the user wrote, not the letters the analysis gave them."""
    if fact.pattern is None:
        return text
    text = text.replace(repr(fact.subscripts), repr(fact.pattern))
    for letter, name in fact.axis_names:
        text = text.replace(f"index {letter!r}", f"axis {name!r}")
    return text


def einsum_contract_text(fact) -> str:
    return _in_user_names(f"einsum contract error: {fact.reason}", fact)


def einsum_broadcast_text(fact) -> str:
    shown = fact.label if fact.label in INDEX_LETTERS else "..."
    return _in_user_names(
        f"implicit broadcast in einsum {fact.subscripts!r}: index {shown!r} is {render_dim(fact.a)} in one operand "
        f"and {render_dim(fact.b)} in another; expand explicitly", fact)


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


__all__ = ["budget_text", "sized_dim", "sized_shape", "growth_text", "einsum_contract_text", "einsum_broadcast_text", "format_bytes", "format_flops", "format_seconds",
           "shape_text", "Decimal"]
