"""`[copy.deepcopy(args) for _ in range(n)]`: a comprehension over `range(n)` of known n whose
element does not read the loop's names and evaluates to plain data (numbers, strings, None,
functions and classes, tuples and dicts of them) is the list of n equal values, as Python makes
it. The element is evaluated once (python_values.comprehension's repeat reading): an element that
reads its index, or makes anything with an identity of its own (a module, a tensor, an object of a
class, a list that may grow), stays unknown."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import DimFact, ScalarFact, SequenceFact, StringFact
from ..values.library_objects import IntFact, MappingFact
from ..values.objects import NONE, BoolFact, ClassRef, FunctionRef
from .known_values import MAX_ITEMS, int_of
from .python_values import Partial

# values the run holds as immutable facts: equal values are interchangeable (config_copies._PLAIN)
_SCALARS = (ScalarFact, DimFact, IntFact, BoolFact, StringFact, FunctionRef, ClassRef)


def repeated_items(interp, node: cst.ListComp, count, item):
    """The list `[element for target in range(count)]` holds, or None when it is not known."""
    if type(node) is not cst.ListComp or _reads_names(node.elt, _bound_names(node.for_in.target)):
        return None
    times = int_of(interp.run, DimFact(count))
    if times is None or times > MAX_ITEMS or not is_plain_data(item):
        return None
    return SequenceFact((item,) * max(times, 0))


def is_plain_data(value, depth: int = 0) -> bool:
    """A fact every copy of which is the same value: scalars, None, and tuples or dicts of them."""
    if value is NONE or type(value) in _SCALARS:
        return True
    if depth > 8:
        return False
    if type(value) is Partial:
        return all(is_plain_data(v, depth + 1) for v in (*value.positional, *(v for _, v in value.keywords)))
    if type(value) is SequenceFact:
        return all(is_plain_data(item, depth + 1) for item in value.items)
    if type(value) is MappingFact:
        return all(is_plain_data(item, depth + 1) for _, item in value.items)
    return False


def _bound_names(target) -> set:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {name for element in target.elements for name in _bound_names(element.value)}
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    return set()


def _reads_names(node, names: set) -> bool:
    pending = [node]
    while pending:
        current = pending.pop()
        if type(current) is cst.Name and current.value in names:
            return True
        pending.extend(current.children)
    return False
