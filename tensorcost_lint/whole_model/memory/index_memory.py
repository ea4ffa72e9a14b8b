"""What indexing ops leave for the backward (memory_activations' table), as torch 2.x's autograd
saves it (derivatives.yaml; checked against `grad_fn._saved_indices` in the tests):

- `x[i]` with a tensor index (advanced indexing, IndexBackward0): every index tensor as it was
  given — int64, int32 or a bool mask alike, never the input; a Python list of ints is first made
  an int64 tensor of its length, which is saved. A 0-dim integer tensor acts as an int (`select`):
  nothing. Basic indexing (ints, slices, None, `...`) is a view and saves nothing.
- `torch.topk` / `torch.sort` (TopkBackward0, SortBackward0): the indices they return (int64, like
  the values), which scatter the gradient back."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import SequenceFact, TensorFact

_INTEGERS = frozenset({"int64", "int32", "int16", "int8", "uint8"})


def advanced_index_saved(tracker, node: cst.Subscript):
    """The storages `x[...]` saves, or why that is not known (a str)."""
    facts = tracker.seen
    saved = []
    for element in node.slice:
        if not isinstance(element.slice, cst.Index):
            continue  # a slice
        value = element.slice.value
        fact = facts.get(id(value))
        if type(fact) is TensorFact:
            if fact.shape is not None and len(fact.shape) == 0 and fact.dtype in _INTEGERS:
                continue  # a 0-dim integer tensor indexes as an int would
            if fact.shape is None or fact.dtype is None:
                return "advanced indexing by a tensor of unknown rank or dtype"
            layout = tracker.ensure(fact)
            saved.append(layout.storage)
        elif isinstance(value, cst.Tuple):
            return "indexing by a parenthesised tuple"  # `x[(i, j)]` is `x[i, j]`, whatever i and j are
        elif isinstance(value, cst.List):
            if not all(isinstance(e.value, cst.Integer) for e in value.elements):
                return "advanced indexing by a list that is not of int literals"
            saved.append(tracker.copy_storage(len(value.elements), "int64"))
    return tuple(saved)


def returned_indices(tracker, result):
    """The indices `topk`/`sort` return beside their values (the second item of the result)."""
    if type(result) is not SequenceFact or len(result.items) != 2 or type(result.items[1]) is not TensorFact:
        return "topk/sort whose indices are not known"
    return (tracker.ensure(result.items[1]).storage,)
