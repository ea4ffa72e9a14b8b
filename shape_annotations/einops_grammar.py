"""The einops pattern grammar: `"b (h d) -> b h d"`, `"b ... c -> b c"`, `"b h q d, b h k d -> b h q k"`.

Follows einops' own `ParsedExpression` (einops/parsing.py): axes are separated by single spaces
and parentheses, groups are one level deep, `...` appears at most once per side, anonymous axes
are decimal integers (`1`, or a repeat's `2`), and names are identifiers that neither start nor
end with `_` (einsum also allows a lone `_`). Syntax only: which identifiers may appear on which
side depends on the operation and is checked in einops_patterns.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from .errors import ShapeError
from .limits import MAX_DIMS, check_text_size

ELLIPSIS = "..."
# An axis-list item: a name, an anonymous axis length (`1`, `2`), "..." or a group of those.
AxisItem = Union[str, int, tuple[Union[str, int], ...]]
AxisList = tuple[AxisItem, ...]


@dataclass(frozen=True, slots=True)
class EinopsPattern:
    """inputs: one axis-list per operand (several only for einsum); output: the result's.
    The offsets (not compared) are where each top-level item starts in `text`, for errors."""

    inputs: tuple[AxisList, ...]
    output: AxisList
    text: str = field(default="", compare=False)
    input_offsets: tuple[tuple[int, ...], ...] = field(default=(), compare=False)
    output_offsets: tuple[int, ...] = field(default=(), compare=False)


def parse_einops_pattern(pattern: str) -> EinopsPattern:
    if type(pattern) is not str:
        raise ShapeError("an einops pattern must be a string")
    check_text_size(pattern, "einops pattern")
    arrow = pattern.find("->")
    if arrow < 0:
        raise ShapeError("an einops pattern needs '->' between input and output axes", 0, len(pattern) or 1)
    second = pattern.find("->", arrow + 2)
    if second >= 0:
        raise ShapeError("an einops pattern has exactly one '->'", second, 2)
    inputs: list[AxisList] = []
    input_offsets: list[tuple[int, ...]] = []
    start = 0
    for piece in pattern[:arrow].split(","):
        items, offsets = _axis_list(piece, start)
        inputs.append(items)
        input_offsets.append(offsets)
        start += len(piece) + 1
    output, output_offsets = _axis_list(pattern[arrow + 2:], arrow + 2)
    return EinopsPattern(tuple(inputs), output, pattern, tuple(input_offsets), output_offsets)


def _axis_list(side: str, base: int) -> tuple[AxisList, tuple[int, ...]]:
    dots = side.count(".")
    if dots and (side.count(ELLIPSIS) != 1 or dots != 3):
        at = side.find(".")
        raise ShapeError("dots may only form one '...' per side", base + at, 1)
    items: list[AxisItem] = []
    offsets: list[int] = []
    group: list[str | int] | None = None
    group_at = 0
    i = 0
    while i < len(side):
        ch = side[i]
        if ch == " ":
            i += 1
        elif ch == "(":
            if group is not None:
                raise ShapeError("axis composition is one level deep (no brackets inside brackets)", base + i)
            group, group_at = [], i
            i += 1
        elif ch == ")":
            if group is None:
                raise ShapeError("unbalanced ')'", base + i)
            items.append(tuple(group))
            offsets.append(base + group_at)
            group = None
            i += 1
        elif side.startswith(ELLIPSIS, i):
            (items if group is None else group).append(ELLIPSIS)
            if group is None:
                offsets.append(base + i)
            i += 3
        elif ch.isalnum() or ch == "_":
            j = i
            while j < len(side) and (side[j].isalnum() or side[j] == "_"):
                j += 1
            axis = _axis(side[i:j], base + i)
            (items if group is None else group).append(axis)
            if group is None:
                offsets.append(base + i)
            i = j
        else:
            raise ShapeError(f"unknown character {ch!r} in einops pattern", base + i)
        if len(items) > MAX_DIMS:
            raise ShapeError(f"more than {MAX_DIMS} axes; refused", base + i)
    if group is not None:
        raise ShapeError("unclosed '('", base + group_at)
    return tuple(items), tuple(offsets)


def _axis(word: str, at: int) -> str | int:
    if word.isdecimal():
        value = int(word)
        if value <= 0:
            raise ShapeError(f"anonymous axis must have a positive length, not {word}", at, len(word))
        return value
    if not word.isidentifier():
        raise ShapeError(f"invalid axis name {word!r}: not a Python identifier", at, len(word))
    if word != "_" and (word.startswith("_") or word.endswith("_")):
        raise ShapeError(f"axis name {word!r} should not start or end with '_'", at, len(word))
    return word


def names_of(items: AxisList) -> list[str]:
    """Every axis name of an axis-list, groups flattened, '...' excluded."""
    out: list[str] = []
    for item in items:
        members = item if type(item) is tuple else (item,)
        out.extend(m for m in members if type(m) is str and m != ELLIPSIS)
    return out


def has_ellipsis(items: AxisList) -> bool:
    return any(item == ELLIPSIS or (type(item) is tuple and ELLIPSIS in item) for item in items)
