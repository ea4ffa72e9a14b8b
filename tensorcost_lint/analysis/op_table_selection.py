"""The op table's entries for ops that pick, sort, mask or write parts of a tensor: `where`,
masked fills, gathers and scatters, sorts, top-k and the medians. op_table.py assembles them with
the other families; op_entry.py says what each field means."""

from __future__ import annotations

from . import pointwise_ops, selection_ops, tensor_functions as function_rules, tensor_methods as method_rules
from .op_entry import CONDITION, INDEX, INDICES, INPUT_INDEX, MASK, NOTHING, Op, ops

_same = pointwise_ops.same
# writes into the receiver, conjugations and random draws: the receiver's shape and dtype
_WRITES = ("index_fill", "index_copy", "index_add", "scatter_add", "scatter_reduce", "index_put", "put",
           "diagonal_scatter", "select_scatter", "slice_scatter", "renorm", "msort", "conj", "conj_physical",
           "resolve_conj", "resolve_neg")

OPS: tuple[Op, ...] = (
    # by what their derivative reads
    Op("torch.where", saved=CONDITION, shape=function_rules._where),
    Op("masked_fill", torch=True, saved=MASK, shape=method_rules._same, torch_shape=function_rules.preserve),
    Op("masked_fill_", saved=MASK, shape=method_rules._same),
    Op("gather", torch=True, saved=INPUT_INDEX, shape=pointwise_ops._gather),
    Op("index_select", torch=True, saved=INDEX, shape=pointwise_ops._index_select),
    Op("scatter", torch=True, saved=INDEX, shape=_same),
    Op("scatter_", saved=INDEX, shape=_same),
    Op("topk", torch=True, saved=INDICES, shape=selection_ops._topk),
    Op("sort", torch=True, saved=INDICES, shape=selection_ops._sorted_pair),
    # a draw of 0s and 1s with the input's probabilities (drop path's keep mask): its gradient is zero
    Op("bernoulli", torch=True, saved=NOTHING, shape=method_rules._same),
    Op("bernoulli_", saved=NOTHING, shape=method_rules._same),
    # their saved tensors not held against autograd yet
    Op("where", shape=pointwise_ops.where_method),
    *ops("numpy.where jax.numpy.where", shape=function_rules._where),
    Op("masked_scatter", torch=True, shape=pointwise_ops.masked_scatter),
    *ops(_WRITES, torch=True, shape=_same),
    *ops((*(f"{name}_" for name in _WRITES[:7]), "renorm_", "conj_physical_"), shape=_same),
    *ops("cummax cummin", torch=True, shape=selection_ops._sorted_pair),
    Op("argsort", torch=True, shape=selection_ops._argsort),
    *ops("median nanmedian", torch=True, shape=selection_ops._picked(0, None)),
    Op("mode", torch=True, shape=selection_ops._picked(0, -1)),
    Op("kthvalue", torch=True, shape=selection_ops._picked(1, -1)),
)
