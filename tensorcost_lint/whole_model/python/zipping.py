"""`zip(...)` and `enumerate(...)` in a whole-model run, over any mix of module lists (repeated or
listed), `range(n)` and known Python sequences (`tuple([None] * len(self.h))`), as Python runs them:
zip stops at the shortest argument.

The result is a ModuleList of per-step tuples: repeated (one tuple, a symbolic count — the layer
loop keeps `n_layer` executions) when every step yields the same values, listed (one tuple per
step, the loop unrolls) when they differ, None when the length is not known."""

from __future__ import annotations

import libcst as cst

from shape_annotations import evaluate_dim, same_dim

from ...analysis.facts import ScalarFact, SequenceFact
from ...analysis.interpreter import UNHANDLED
from . import class_members
from ..values.objects import ModuleList, Sequential

MAX_ZIPPED = 4096  # listed steps expanded from a repeated argument, at most


def _iterable(interp, node):
    """(items, count) of one argument: count a DimExpr when `items` is one value repeated, None
    when `items` are the elements; None when the argument is not a known iterable."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range" \
            and len(node.args) == 1 and "range" not in interp.env:
        count = interp.dim_of(node.args[0].value)
        return None if count is None else ((ScalarFact(),), count)  # ints: `w[i]` drops a dim
    value = class_members.protocol_items(interp, interp.eval(node))  # a Sequence class of the tree
    as_module_list = getattr(value, "as_module_list", None)  # a list grown by `append` (python_values)
    if as_module_list is not None:
        value = as_module_list()
    if type(value) in (ModuleList, Sequential):
        return value.items, value.count
    if type(value) is SequenceFact:
        return value.items, None
    return None


def _length(count, sizes):
    try:
        return evaluate_dim(count, sizes)
    except Exception:  # noqa: BLE001 - an unbound count has no known length
        return None


def _same(items) -> bool:
    return all(item is items[0] or item == items[0] for item in items)


def zip_iterables(interp, iterables):
    """The ModuleList of zip over (items, count) pairs, or None when its steps are not known."""
    sizes = interp.run.sizes
    repeated = [count for _, count in iterables if count is not None]
    listed = [items for items, count in iterables if count is None]
    if not listed:  # every argument repeats one value: the shortest count, when it is known
        shortest = repeated[0]
        if not all(same_dim(count, shortest, sizes) is True for count in repeated[1:]):
            lengths = [_length(count, sizes) for count in repeated]
            if None in lengths:
                return None
            shortest = repeated[lengths.index(min(lengths))]
        return ModuleList((SequenceFact(tuple(items[0] for items, _ in iterables)),), shortest)
    steps = min(len(items) for items in listed)
    lengths = [_length(count, sizes) for count in repeated]
    if any(length is None for length in lengths):
        return None
    steps = min([steps, *lengths])
    if steps > MAX_ZIPPED:
        return None
    # one value per step from every listed argument and a repeated argument as long as the zip:
    # the loop runs one body `steps` times under that argument's (symbolic) count
    uniform = [count for count, length in zip(repeated, lengths) if length == steps]
    if steps and uniform and all(_same(items[:steps]) for items in listed):
        return ModuleList((SequenceFact(tuple(items[0] for items, _ in iterables)),), uniform[0])
    return ModuleList(tuple(SequenceFact(tuple(items[0] if count is not None else items[step]
                                               for items, count in iterables)) for step in range(steps)))


def zipped(interp, args):
    """`zip(self.h, past_key_values)`, `zip(range(n), self.blocks)`, `zip(self.layers, self.norms)`."""
    if args.keywords or args.starred or not args.positional:
        return UNHANDLED
    iterables = [_iterable(interp, value) for value in args.positional]
    if any(value is None for value in iterables):
        return None
    return zip_iterables(interp, iterables)


def enumerated(interp, args):
    """`enumerate(x)` over a known iterable: (index, item) pairs; the index is not a known value."""
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    iterable = _iterable(interp, args.positional[0])
    if iterable is None:
        return None
    items, count = iterable
    return ModuleList(tuple(SequenceFact((None, item)) for item in items), count)
