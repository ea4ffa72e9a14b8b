"""What indexing ops leave for the backward (memory_activations' table), as torch 2.x's autograd
saves it (derivatives.yaml; checked against `grad_fn._saved_indices` in the tests):

- `x[i]` with a tensor index (advanced indexing, IndexBackward0): every index tensor as it was
  given — int64, int32 or a bool mask alike, never the input; a Python list of ints is first made
  an int64 tensor of its length, which is saved. A 0-dim integer tensor acts as an int (`select`):
  nothing. Basic indexing (ints, slices, None, `...`) is a view and saves nothing.
- `torch.topk` / `torch.sort` (TopkBackward0, SortBackward0): the indices they return (int64, like
  the values), which scatter the gradient back.

A basic-indexing view saves nothing, but reading part of a tensor has a backward that allocates:
PartialRead below."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ...analysis.facts import SequenceFact, TensorFact
from ..values.strides import product

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


@dataclass
class PartialRead:
    """Basic indexing that reads part of a tensor needing a gradient (`x[:, i]`, `x[..., :h]`): its
    backward (select_backward, slice_backward) makes a zero tensor of the indexed tensor's size and
    copies the view's gradient in; the engine sums the contributions of several such reads of one
    tensor in its buffer (`old + new`, out of place) until the node that made the tensor runs
    (memory_peak, gradient_buffers). `storages`: the indexed tensor's storage (emptied when the
    backward never reaches the view, like OpSaved's); `receiver`: the identity of the indexed tensor,
    `elements` and `dtype` its size."""

    module: str
    storages: tuple
    receiver: int
    elements: int | None
    dtype: str | None


def partial_read(tracker, node: cst.Subscript, out) -> PartialRead | None:
    """The PartialRead of `node` when it is a view of fewer elements than the tensor it indexes."""
    receiver = tracker.seen.get(id(node.value))
    if type(receiver) is not TensorFact or type(out) is not TensorFact:
        return None
    source, view = tracker.layout(receiver), tracker.layout(out)
    if source is None or view is None or view.storage is not source.storage or source.storage.parameter:
        return None  # a copy (advanced indexing), or a parameter's slice (its gradient is the parameter's)
    whole = None if source.sizes is None else product(source.sizes)
    part = None if view.sizes is None else product(view.sizes)
    if whole is not None and part is not None and part >= whole:
        return None  # the whole tensor again (`x[:, :]`, `x[None]`): a view of the same size
    return PartialRead("", (source.storage,), id(receiver), whole, receiver.dtype)
