"""Literal values read straight from LibCST nodes, without evaluating anything."""

from __future__ import annotations

import libcst as cst


def int_value(node: cst.BaseExpression) -> int | None:
    """A literal int (`3`, `-1`)."""
    if isinstance(node, cst.Integer):
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:
            return None
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
