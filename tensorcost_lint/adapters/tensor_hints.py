"""Shapes in the editor: inlay hints after each tensor assignment and hover on any tensor variable.

The analysis records each tensor binding it makes (a parameter, an assignment target) and each use
of a bound name, with the fact it held there (`analysis.context.Binding`); this module only puts
those facts into words. A shape with any dim the analysis does not know gets no hint and no hover:
the editor shows what the analysis proved, never a guess. Positions are the engine's (1-based
columns); the language server converts them to the client's units.
"""

from __future__ import annotations

from dataclasses import dataclass

from shape_annotations import BinOp, Unknown

from ..rules.messages import sized_shape

_KIND_WORDS = {"parameter": "parameter", "assignment": "assigned here", "use": "as used here"}


@dataclass(frozen=True)
class Hint:
    line: int  # 1-based
    column: int  # 1-based: just after the assignment target
    label: str  # `: [B=8, T=1024, C=768] float32`


def _known(dim) -> bool:
    if type(dim) is Unknown:
        return False
    if type(dim) is BinOp:
        return _known(dim.left) and _known(dim.right)
    return True


def shape_label(fact, sizes) -> str | None:
    """`[B=8, T=1024, 3*C=2304] float32`, the dtype only when known; None for a shape not fully known."""
    shape = getattr(fact, "shape", None)
    if shape is None or not all(_known(dim) for dim in shape):
        return None
    text = sized_shape(shape, sizes)
    return f"{text} {fact.dtype}" if fact.dtype else text


def latest(bindings) -> list:
    """One binding per place: a loop body is analysed more than once, and the last pass holds what
    the flow ends with (a use rebound by `x += y` at the same place is that assignment)."""
    by_place = {}
    for binding in bindings:
        by_place[(binding.line, binding.column, binding.end_line, binding.end_column)] = binding
    return sorted(by_place.values(), key=lambda b: (b.line, b.column))


def inlay_hints(bindings, sizes, first_line: int = 1, last_line: int | None = None) -> list[Hint]:
    """A hint after each tensor assignment target on lines first_line..last_line (1-based)."""
    hints = []
    for binding in latest(bindings):
        if binding.kind != "assignment" or binding.line < first_line or (last_line is not None and binding.line > last_line):
            continue
        label = shape_label(binding.fact, sizes)
        if label is not None:
            hints.append(Hint(binding.end_line, binding.end_column, f": {label}"))
    return hints


def binding_at(bindings, line: int, column: int):
    """The binding or use whose name holds (line, column), 1-based, or None."""
    for binding in latest(bindings):
        if (binding.line, binding.column) <= (line, column) < (binding.end_line, binding.end_column):
            return binding
    return None


def variable_hover(binding, sizes, markdown: bool = True) -> str | None:
    """`q` (assigned here): `[B=8, nh=12, T=1024, hs=64]` float32 — or None when the shape is not known."""
    shape = getattr(binding.fact, "shape", None)
    if shape is None or not all(_known(dim) for dim in shape):
        return None
    dtype = binding.fact.dtype or "dtype not known (costed as default_dtype)"
    tick = "`" if markdown else ""
    return f"{tick}{binding.name}{tick} ({_KIND_WORDS[binding.kind]}): {tick}{sized_shape(shape, sizes)}{tick} {dtype}"
