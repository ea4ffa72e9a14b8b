"""The op table's entries for layers called as functions, with no parameter of their own: dropout,
normalisations, embeddings, pooling, and the layouts einops and einx describe in a pattern.
op_table.py assembles them with the other families; op_entry.py says what each field means. Their
saved tensors are read by memory_activations' own rules (norms, dropout, embeddings) or not known."""

from __future__ import annotations

from . import einops_packing, einx_ops, functional_ops, tensor_functions as function_rules, unfolding, window_pooling
from .op_entry import BATCH_STATISTICS, NN_FUNCTIONAL as _F, Op, ops

OPS: tuple[Op, ...] = (
    # the input's shape and dtype
    *ops((_F + name for name in ("dropout", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
                                 "layer_norm", "rms_norm", "normalize")), shape=function_rules.preserve),
    Op("torch.dropout", shape=function_rules.preserve),
    Op(_F + "batch_norm", saved=BATCH_STATISTICS, shape=function_rules.preserve),
    Op(_F + "embedding", shape=function_rules._embedding),
    # torch's output sizes: stride defaulting to the kernel, ceil_mode, indices with return_indices
    *(Op(f"{_F}{kind}_pool{rank}d", shape=window_pooling._functional(kind, rank))
      for kind in ("max", "avg") for rank in (1, 2, 3)),
    *(Op(f"{_F}adaptive_{kind}_pool{rank}d", shape=functional_ops._adaptive_pool(rank, kind == "max"))
      for kind in ("avg", "max") for rank in (1, 2, 3)),
    Op(_F + "unfold", shape=unfolding.functional),
    *(Op(f"einops.{kind}", shape=function_rules._einops(kind)) for kind in ("rearrange", "repeat", "reduce")),
    Op("einops.pack", shape=einops_packing.pack),
    Op("einops.unpack", shape=einops_packing.unpack),
    # einx's elementwise ops laid out by their descriptions, by their result's dtype
    *ops((f"einx.{name}" for name in ("add", "subtract", "multiply", "floor_divide", "maximum", "minimum",
                                      "logaddexp")), shape=einx_ops._elementwise("same")),
    *ops((f"einx.{name}" for name in ("logical_and", "logical_or", "less", "less_equal", "greater", "greater_equal",
                                      "equal", "not_equal")), shape=einx_ops._elementwise("bool")),
    *ops("einx.true_divide einx.divide", shape=einx_ops._elementwise("divide")),
    Op("einx.where", shape=einx_ops._elementwise("where")),
)
