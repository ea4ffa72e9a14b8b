"""`x` that is None on one path and a value on another (`return None` under an undecided data check,
else the tensor): an optional value, as a type checker reads `Optional[T]`. Using it is as unknown
as ever; but a branch on `x is not None` (or `x is None`, `x`, `not x`) runs its sides with `x`
narrowed — the value on one, None on the other — so what each side computes from it keeps its shape
(`mask_fn = and_masks(mask_fn, packed_fn(x))` under `if x is not None`)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .objects import NONE


@dataclass(frozen=True, eq=False)
class MaybeNone:
    value: object  # what it is when it is not None


def join_optional(a, b):
    """The optional value of two paths' values when one is None and the other a known value (or
    already optional around it); None (unknown) otherwise."""
    if type(a) is MaybeNone and (b is NONE or b is a.value):
        return a
    if type(b) is MaybeNone and (a is NONE or a is b.value):
        return b
    if a is NONE and b is not None and b is not NONE and type(b) is not MaybeNone:
        return MaybeNone(b)
    if b is NONE and a is not None and a is not NONE and type(a) is not MaybeNone:
        return MaybeNone(a)
    return None


def narrowed(test, env: dict) -> tuple[dict, dict]:
    """(names bound on the true side, on the false side) by a test on an optional name:
    `x is not None`, `x is None`, `x`, `not x`, and each operand of an `and` on the true side."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        left, _ = narrowed(test.left, env)
        right, _ = narrowed(test.right, env)
        return {**left, **right}, {}
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        true, false = narrowed(test.expression, env)
        return false, true
    name, positive = None, True
    if isinstance(test, cst.Name):
        name = test.value  # a present optional tensor or module is true
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
        target = test.comparisons[0]
        if isinstance(target.comparator, cst.Name) and target.comparator.value == "None" \
                and isinstance(target.operator, (cst.Is, cst.IsNot)):
            name, positive = test.left.value, isinstance(target.operator, cst.IsNot)
    value = env.get(name) if name is not None else None
    if type(value) is not MaybeNone:
        return {}, {}
    present, absent = {name: value.value}, {name: NONE}
    return (present, absent) if positive else (absent, present)
