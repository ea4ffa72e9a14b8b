"""The records a dimension is made of, and how they are written back as text.

A dimension is a name (`seq`), an integer (`64`), an expression over those (`d_model//n_heads`),
or Unknown. Records are frozen and slotted; Sym, Const and BinOp compare structurally, while
Unknown compares by identity: two dims nothing is known about are never "the same dim", so an
output like `(_, _)` is never mistaken for a quadratic `(seq, seq)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

OPERATORS = ("+", "-", "*", "//")
# Python precedence: `a*b//c` is `(a*b)//c`, so * and // share a level, as do + and -.
PRECEDENCE = {"+": 1, "-": 1, "*": 2, "//": 2}


@dataclass(frozen=True, slots=True)
class Sym:
    """A named dimension, bound to a size by config, pragma or CLI (`seq`, `d_model`)."""

    name: str


@dataclass(frozen=True, slots=True)
class Const:
    value: int


@dataclass(frozen=True, slots=True)
class BinOp:
    """`left op right` with op one of + - * // (// only meaningful when it divides exactly)."""

    op: str
    left: DimExpr
    right: DimExpr


@dataclass(frozen=True, slots=True, eq=False)
class Unknown:
    """A dim nothing is known about (`_`, `?`, a value the analysis could not resolve).

    eq=False: equality and hash are by identity, so an Unknown equals nothing, not even another
    Unknown with the same label. The label is only for messages.
    """

    label: str = "?"


DimExpr = Union[Sym, Const, BinOp, Unknown]


def fold_dim(d: DimExpr, leaf, combine):
    """The one bottom-up fold over a dim expression: `leaf(d)` at a Const, Sym or Unknown,
    `combine(op, left, right, d)` at a BinOp with its operands' folded values (evaluation to a
    size and conversion to a polynomial are both this fold)."""
    if type(d) is BinOp:
        return combine(d.op, fold_dim(d.left, leaf, combine), fold_dim(d.right, leaf, combine), d)
    return leaf(d)


def dim_from_int(n: int) -> Const:
    if type(n) is not int:
        raise TypeError(f"dim_from_int expects an int, got {type(n).__name__}")
    return Const(n)


def free_names(d: DimExpr) -> frozenset[str]:
    names: set[str] = set()
    stack = [d]
    while stack:
        node = stack.pop()
        if type(node) is Sym:
            names.add(node.name)
        elif type(node) is BinOp:
            stack.append(node.left)
            stack.append(node.right)
    return frozenset(names)


def contains_unknown(d: DimExpr) -> bool:
    stack = [d]
    while stack:
        node = stack.pop()
        if type(node) is Unknown:
            return True
        if type(node) is BinOp:
            stack.append(node.left)
            stack.append(node.right)
    return False


def dim_depth(d: DimExpr) -> int:
    """Operator nesting: 0 for a name or int, 1 for `a+b`, 2 for `(a+b)*c`."""
    if type(d) is not BinOp:
        return 0
    return 1 + max(dim_depth(d.left), dim_depth(d.right))


def int_text(value: int) -> str:
    """`str(value)`, or past 40 digits its size (`<5000-digit integer>`): str() of an int past Python's
    4,300-digit limit raises, and such a number (a 0x... literal in model code) is no size anyway."""
    if -10**40 < value < 10**40:
        return str(value)
    magnitude = abs(value)
    digits = max(1, int(magnitude.bit_length() * 0.30102999566398120))  # log10(2)
    while magnitude >= 10**digits:
        digits += 1
    return f"<{digits}-digit integer>"


def render_dim(d: DimExpr) -> str:
    """Text that parse_dim_expr reads back to the same record (Unknown renders as `?`).

    Parentheses only where Python's precedence needs them; the right operand of a same-level
    operator is always parenthesised because `a-(b-c)`, `a*(b//c)` and `a*(b*c)` are different trees.
    """
    if type(d) is Sym:
        return d.name
    if type(d) is Const:
        return int_text(d.value)
    if type(d) is Unknown:
        return "?"
    if type(d) is not BinOp:
        raise TypeError(f"not a dimension expression: {d!r}")
    level = PRECEDENCE[d.op]
    left = render_dim(d.left)
    right = render_dim(d.right)
    if _level(d.left) < level:
        left = f"({left})"
    if _level(d.right) <= level:
        right = f"({right})"
    return f"{left}{d.op}{right}"


def _level(d: DimExpr) -> int:
    if type(d) is BinOp:
        return PRECEDENCE[d.op]
    if type(d) is Const and d.value < 0:
        # `-3` is a unary minus, which binds tighter than any binary operator (`a*-3`).
        return 3
    return 4
