"""Comparing and building dimension expressions without sizes: simplify, same_dim, mul/floordiv.

The lint engine builds dims while propagating shapes (`C // n_head` in a view, the `-1` of a
reshape, einops groups `(h d)` -> `h*d`) and compares them at every contraction. Comparison is
three-valued: True (provably equal), False (provably different), None (cannot tell without sizes),
so a rule only fires on a provable mismatch.
"""

from __future__ import annotations

from collections.abc import Mapping

from .dim_evaluation import evaluate_dim
from .dim_records import BinOp, Const, DimExpr, Unknown, contains_unknown, render_dim
from .errors import ShapeError
from .polynomial import Polynomial


def simplify_dim(d: DimExpr) -> DimExpr:
    """Constant folding and a canonical form: constants left of `*` (`2*d`), right of `+` (`pos+1`).

    Inexact constant divisions (`5//2`) are kept unfolded so that evaluate_dim reports them.
    """
    if type(d) is not BinOp:
        return d
    return _combine(d.op, simplify_dim(d.left), simplify_dim(d.right))


# A folded constant past this is no size or count (torch's are int64): it is unknown from then on,
# so code that squares a number line after line (`n = n * n`) never builds a million-digit int.
_LARGEST_FOLDED_BITS = 256


def _combine(op: str, left: DimExpr, right: DimExpr) -> DimExpr:
    if type(left) is Unknown and type(right) is Unknown:
        return left  # nothing to tell apart: an expression of two unknowns would only grow (`n = n * n`)
    lc = left.value if type(left) is Const else None
    rc = right.value if type(right) is Const else None
    if op == "*":
        if lc is not None and rc is not None:
            if abs(lc).bit_length() + abs(rc).bit_length() > _LARGEST_FOLDED_BITS + 1:
                return Unknown(f"a size past 2**{_LARGEST_FOLDED_BITS}")
            return Const(lc * rc)
        if rc is not None:  # canonical: the constant factor first
            left, right, lc, rc = right, left, rc, None
        if lc == 1:
            return right
        if lc == 0 and not contains_unknown(right):
            return Const(0)
        if lc is not None and type(right) is BinOp and right.op == "*" and type(right.left) is Const:
            return _combine("*", Const(lc * right.left.value), right.right)
        return BinOp("*", left, right)
    if op == "//":
        if rc is not None and rc > 0:
            if lc is not None and lc % rc == 0:
                return Const(lc // rc)
            if rc == 1:
                return left
            if type(left) is BinOp and left.op == "*" and type(left.left) is Const and left.left.value % rc == 0:
                return _combine("*", Const(left.left.value // rc), left.right)
        if left == right and not contains_unknown(left):
            return Const(1)
        return BinOp("//", left, right)
    if op == "+":
        if lc is not None and rc is not None:
            return Const(lc + rc)
        if lc is not None:  # canonical: the constant term last
            left, right, lc, rc = right, left, rc, lc
        if rc == 0:
            return left
        if rc is not None and type(left) is BinOp and left.op in ("+", "-") and type(left.right) is Const:
            inner = left.right.value if left.op == "+" else -left.right.value
            return _offset(left.left, inner + rc)
        if rc is not None and rc < 0:
            return BinOp("-", left, Const(-rc))
        return BinOp("+", left, right)
    if op == "-":
        if lc is not None and rc is not None:
            return Const(lc - rc)
        if rc == 0:
            return left
        if left == right and not contains_unknown(left):
            return Const(0)
        if rc is not None:
            return _combine("+", left, Const(-rc))
        return BinOp("-", left, right)
    raise ValueError(f"unknown dimension operator {op!r}")


def _offset(base: DimExpr, amount: int) -> DimExpr:
    if amount == 0:
        return base
    return BinOp("+", base, Const(amount)) if amount > 0 else BinOp("-", base, Const(-amount))


def mul_dims(a: DimExpr, b: DimExpr) -> DimExpr:
    return _combine("*", simplify_dim(a), simplify_dim(b))


def add_dims(a: DimExpr, b: DimExpr) -> DimExpr:
    return _combine("+", simplify_dim(a), simplify_dim(b))


def sub_dims(a: DimExpr, b: DimExpr) -> DimExpr:
    return _combine("-", simplify_dim(a), simplify_dim(b))


def floordiv_dims(a: DimExpr, b: DimExpr) -> DimExpr:
    """a // b, simplified; symbolic cancellation when exact (`(h*d)//h` -> `d`, `(8*d)//2` -> `4*d`).

    Raises ShapeError when both are constants and the division is not exact, or the divisor is
    a non-positive constant: a reshape that cannot happen.
    """
    left, right = simplify_dim(a), simplify_dim(b)
    if type(right) is Const and right.value <= 0:
        raise ShapeError(f"{render_dim(left)} // {right.value}: divisor must be a positive size")
    if type(left) is Const and type(right) is Const and left.value % right.value:
        raise ShapeError(f"{left.value} is not divisible by {right.value}")
    result = _combine("//", left, right)
    if type(result) is BinOp and result.op == "//":
        num, den = Polynomial.from_dim(left), Polynomial.from_dim(right)
        if num is not None and den is not None:
            quotient = num.exact_quotient(den)
            if quotient is not None:
                return simplify_dim(quotient.to_dim())
    return result


def same_dim(a: DimExpr, b: DimExpr, sizes: Mapping[str, int]) -> bool | None:
    """True when provably equal, False when provably different, None when undecidable.

    Structural (after simplification) or polynomial identity (`d+d` is `2*d`) decides without
    sizes; otherwise both are evaluated under `sizes`; a constant non-zero difference (`pos` vs
    `pos+1`) is False even unbound. Unknown never decides anything.
    """
    if type(a) is Unknown or type(b) is Unknown or contains_unknown(a) or contains_unknown(b):
        return None
    sa, sb = simplify_dim(a), simplify_dim(b)
    if sa == sb:
        return True
    try:
        pa, pb = Polynomial.from_dim(sa), Polynomial.from_dim(sb)
    except ShapeError:
        pa = pb = None
    if pa is not None and pb is not None and pa == pb:
        return True
    try:
        va, vb = evaluate_dim(sa, sizes), evaluate_dim(sb, sizes)
    except ShapeError:
        va = vb = None
    if va is not None and vb is not None:
        return va == vb
    if pa is not None and pb is not None:
        difference = (pa - pb).constant
        if difference is not None and difference != 0:
            return False
    return None
