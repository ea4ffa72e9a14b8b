"""Which expressions can be evaluated again without effect: names, attribute chains, literals, and
arithmetic, comparisons, containers and value builtins over them (no call of model code, no
contraction, so no site is recorded twice). A leaf module: the object protocols (class_members)
and the known values both read it."""

from __future__ import annotations

import libcst as cst

from ...analysis.literals import int_value


def is_plain(node) -> bool:
    """Names, attribute chains and literals: evaluating them twice records nothing."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, (cst.Name, cst.Integer, cst.SimpleString, cst.Float)) or int_value(node) is not None


_VALUE_BUILTINS = frozenset({"len", "int", "bool", "isinstance", "min", "max", "abs", "type"})  # run no model code


def side_effect_free(node) -> bool:
    """Arithmetic over names, attributes, literals and `len(...)` of them: evaluating it records no
    site (so an undecided comparison may be read again by the per-file evaluator)."""
    if is_plain(node):
        return True
    if isinstance(node, cst.BinaryOperation):  # `a @ b` is a contraction: a site
        return not isinstance(node.operator, cst.MatrixMultiply) and side_effect_free(node.left) \
            and side_effect_free(node.right)
    if isinstance(node, cst.UnaryOperation):
        return side_effect_free(node.expression)
    if isinstance(node, cst.Comparison):  # `index % 2 == 0`, `start <= i < stop`
        return side_effect_free(node.left) and all(side_effect_free(c.comparator) for c in node.comparisons)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(side_effect_free(e.value) for e in node.elements)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in _VALUE_BUILTINS:
        return all(side_effect_free(a.value) for a in node.args)
    if isinstance(node, cst.Subscript):  # `groups[ind]`: indexing records no site
        return side_effect_free(node.value) and all(
            isinstance(e.slice, cst.Index) and side_effect_free(e.slice.value) for e in node.slice)
    return False
