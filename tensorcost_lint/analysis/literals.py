"""Literal values read straight from LibCST nodes, without evaluating anything."""

from __future__ import annotations

import libcst as cst


# A literal past this magnitude is no size, count or index (torch's are int64); read as a number of
# unknown value, it never reaches a message, a JSON report or str() (which raises past 4,300 digits).
_LARGEST_LITERAL = 10**40


def int_value(node: cst.BaseExpression) -> int | None:
    """A literal int (`3`, `-1`)."""
    if isinstance(node, cst.Integer):
        try:
            value = int(node.value.replace("_", ""), 0)
        except ValueError:  # a decimal literal past Python's digit limit
            return None
        return value if -_LARGEST_LITERAL < value < _LARGEST_LITERAL else None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = int_value(node.expression)
        return None if inner is None else -inner
    return None


def bool_value(node) -> bool | None:
    """A literal `True` or `False`."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def int_tuple(node) -> tuple[int, ...] | None:
    """A literal tuple or list of ints."""
    if not isinstance(node, (cst.Tuple, cst.List)):
        return None
    values = [int_value(e.value) for e in node.elements]
    return None if None in values else tuple(values)
