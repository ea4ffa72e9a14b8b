"""torch's Python pytrees (`torch.utils._pytree`): `tree_flatten`, `tree_unflatten`, `tree_leaves`
and `tree_map` over values the run knows, as torch's registry reads them — a tuple or list and a
dict (values in key order) are nodes, anything else a leaf (a tensor, a number, None, a module).
A wrapper that flattens what a layer returns, scales the first tensor and rebuilds the rest
(`tensors, inverse = tree_flatten_with_inverse(out)`) keeps every shape.

A value the run does not know, or a record (a dataclass: a leaf unless a library registered it as
a node, which the run cannot see), leaves the result unknown; so does `is_leaf=`."""

from __future__ import annotations

from ...analysis.facts import SequenceFact
from ..python.known_calls import call_with_facts
from ..python.known_values import items_of, partly_unknown
from ..python.python_values import GrowingList
from ..values.library_objects import MappingFact, RecordFact, TreeSpec

_LEAF = TreeSpec("leaf")


def _flatten(value, leaves: list):
    """The spec of `value`, its leaves appended; None when its structure is not known."""
    if type(value) is SequenceFact:
        children = [_flatten(item, leaves) for item in value.items]
        return None if None in children else TreeSpec("sequence", tuple(children), value.names)
    if type(value) is MappingFact:
        if partly_unknown(value):
            return None  # keys the run does not know (`**options` of an unknown mapping)
        children = [_flatten(item, leaves) for _, item in value.items]
        return None if None in children else TreeSpec("mapping", tuple(children), tuple(k for k, _ in value.items))
    if value is None or type(value) in (RecordFact, GrowingList):
        return None  # unknown, a record a library may have registered as a node, a list still growing
    leaves.append(value)
    return _LEAF


def _unflatten(spec: TreeSpec, leaves: list):
    if spec.kind == "leaf":
        return leaves.pop(0)
    children = tuple(_unflatten(child, leaves) for child in spec.children)
    if spec.kind == "mapping":
        return MappingFact(tuple(zip(spec.context, children)))
    return SequenceFact(children, spec.context)


def _evaluated(interp, args, count: int):
    """The first `count` positional facts; None (everything evaluated) when the call has others or
    keywords (`is_leaf=`) the reading does not take."""
    values = [interp.eval(value) for value in [*args.positional, *args.keywords.values()]]
    if args.keywords or args.starred or len(args.positional) < count:
        return None
    return values


def tree_flatten(interp, args):
    values = _evaluated(interp, args, 1)
    if values is None or len(values) != 1:
        return None
    leaves: list = []
    spec = _flatten(values[0], leaves)
    return None if spec is None else SequenceFact((SequenceFact(tuple(leaves)), spec))


def tree_leaves(interp, args):
    flattened = tree_flatten(interp, args)
    return None if flattened is None else flattened.items[0]


def tree_unflatten(interp, args):
    values = _evaluated(interp, args, 2)
    if values is None or len(values) != 2 or type(values[1]) is not TreeSpec:
        return None
    leaves = items_of(values[0])
    if leaves is None or len(leaves) != values[1].leaves:
        return None
    return _unflatten(values[1], list(leaves))


def tree_map(interp, args):
    """`tree_map(fn, tree, *rests)`: `fn` called on each leaf (with the rests' leaves at the same
    place, each rest of the tree's own structure), the results in the tree's structure."""
    values = _evaluated(interp, args, 2)
    if values is None:
        return None
    function, *trees = values
    flattened = []
    for tree in trees:
        leaves: list = []
        flattened.append((_flatten(tree, leaves), leaves))
    spec = flattened[0][0]
    if spec is None or any(other != spec for other, _ in flattened[1:]):
        return None
    results = [call_with_facts(interp, args.positional[0], function, list(row))
               for row in zip(*(leaves for _, leaves in flattened))]
    return _unflatten(spec, results)


FUNCTIONS = {f"torch.utils._pytree.{name}": reading for name, reading in (
    ("tree_flatten", tree_flatten), ("tree_leaves", tree_leaves), ("tree_unflatten", tree_unflatten),
    ("tree_map", tree_map))}
