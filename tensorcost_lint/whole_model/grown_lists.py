"""Lists of tensors grown by `append` (python_values.GrowingList) and joined by torch: `outs = []`,
`outs.append(y)` in a loop the run unrolls (a recurrence over a known number of steps), then
`torch.stack(outs, dim=-1)` or `torch.cat(outs, 1)`.

The list holds its items only when it is known item by item: each append ran a known number of
times (straight-line code, an unrolled loop). Appends under a loop read once for many iterations
count symbolically and are not listed here (the join is unknown, never one item's shape)."""

from __future__ import annotations

import libcst as cst

from shape_annotations import Const

from ..analysis import tensor_functions
from ..analysis.arguments import CallArgs
from ..analysis.facts import SequenceFact, TensorFact
from ..analysis.interpreter import UNHANDLED
from .known_values import MAX_ITEMS
from .python_values import GrowingList

# torch's joins over a sequence of tensors (tensor_functions' `_join`)
JOINS = frozenset(name for name in ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack")
                  if name in tensor_functions.FUNCTIONS)
_SYNTHETIC = "tensorcost_grown_"  # the env name the listed tensors are read through


def listed_tensors(grown: GrowingList):
    """The tensors the list holds, in order, or None when they are not known item by item."""
    if grown.unknown:
        return None
    items: list = []
    for fact, count in grown.runs:
        if type(fact) is not TensorFact or type(count) is not Const:
            return None
        items.extend([fact] * count.value)
        if len(items) > MAX_ITEMS:
            return None
    return tuple(items)


def join(interp, node: cst.Call, args, name: str):
    """`torch.stack(outs, ...)` of a grown list: the join of its listed tensors; UNHANDLED when
    the first argument is not a name bound to a grown list (nothing evaluated)."""
    first = args.positional[0] if args.positional and not args.starred else None
    if not isinstance(first, cst.Name) or type(interp.env.get(first.value)) is not GrowingList:
        return UNHANDLED
    items = listed_tensors(interp.env[first.value])
    if not items:
        for value in [*args.positional, *args.keywords.values()]:
            interp.eval(value)
        return None
    interp.eval(first)
    synthetic = f"{_SYNTHETIC}{id(node)}"
    interp.env[synthetic] = SequenceFact(items)
    try:
        return tensor_functions.FUNCTIONS[name](
            interp, CallArgs([cst.Name(synthetic), *args.positional[1:]], args.keywords, args.starred))
    finally:
        interp.env.pop(synthetic, None)
