"""evaluate_dim: a dimension's size under bound sizes, refusing what no tensor can have.

`//` is only meaningful when it divides exactly: `d_model//n_heads` with d_model=768, n_heads=5
is a configuration bug (the model would fail at reshape), so it is an error naming the dims, not
a silently floored 153.
"""

from __future__ import annotations

from collections.abc import Mapping

from .dim_records import BinOp, Const, DimExpr, Sym, contains_unknown, fold_dim, free_names, int_text, \
    render_dim
from .errors import ShapeError
from .limits import MAX_SIZE


def evaluate_dim(d: DimExpr, sizes: Mapping[str, int]) -> int | None:
    """The size of `d`, or None when a name is unbound or the dim is Unknown.

    Raises ShapeError when a `//` does not divide exactly (or divides by a non-positive size), or
    when the result is <= 0 or above 2**63-1.
    """
    kind = type(d)
    if kind is Const:  # most dims of a running model: a number or a bound name, read directly
        value = d.value
    elif kind is Sym:
        if d.name not in sizes:
            return None
        value = sizes[d.name]
    else:
        if contains_unknown(d):
            return None
        if any(name not in sizes for name in free_names(d)):
            return None
        value = _value(d, sizes)
    if value <= 0:
        raise ShapeError(f"dimension {render_dim(d)} evaluates to {int_text(value)}; sizes must be positive")
    if value > MAX_SIZE:
        raise ShapeError(f"dimension {render_dim(d)} evaluates to {int_text(value)}, above 2**63-1")
    return value


def evaluate_integer(d: DimExpr, sizes: Mapping[str, int]) -> int | None:
    """The value of `d` as the Python integer a program computes from the sizes — zero or negative
    included (`padding_length = kv_length - mask.shape[-1]`), for a comparison or a trip count, not a
    size: `//` is Python's floor division there (`num_blocks = (seq_len + block - 1) // block` is 1
    for a sequence shorter than a block), where a declared size must divide exactly (evaluate_dim).
    None when a name is unbound, the dim is Unknown, or a divisor is zero."""
    if contains_unknown(d) or any(name not in sizes for name in free_names(d)):
        return None

    def leaf(d: DimExpr) -> int:
        return d.value if type(d) is Const else sizes[d.name]

    try:
        return fold_dim(d, leaf, _floor_combine)
    except ZeroDivisionError:
        return None


def _floor_combine(op: str, left: int, right: int, d: BinOp) -> int:
    if op == "//":
        return left // right
    return _combine(op, left, right, d)


def _value(d: DimExpr, sizes: Mapping[str, int]) -> int:
    def leaf(d: DimExpr) -> int:
        if type(d) is Const:
            return d.value
        if type(d) is Sym:
            return sizes[d.name]
        raise ShapeError("an unknown dimension has no size")  # excluded by the caller; a clear failure if reached

    return fold_dim(d, leaf, _combine)


def _combine(op: str, left: int, right: int, d: BinOp) -> int:
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if right <= 0:
        raise ShapeError(f"{render_dim(d)}: divisor {render_dim(d.right)} is {right}, not a positive size")
    quotient, remainder = divmod(left, right)
    if remainder:
        raise ShapeError(
            f"{render_dim(d)} does not divide exactly: {_described(d.left, left)} is not a multiple "
            f"of {_described(d.right, right)}"
        )
    return quotient


def _described(d: DimExpr, value: int) -> str:
    text = render_dim(d)
    return str(value) if text == str(value) else f"{text}={value}"
