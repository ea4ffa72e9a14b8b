"""Library layers a whole-model run builds and applies besides `nn.Linear`: einops' `Rearrange`,
`Reduce` and `Repeat` layers (vit-pytorch's patch embedding) and torch's convolutions (timm's
patch embedding), each with the output shape its documentation states."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from shape_annotations import BinOp, Const, ShapeError, rearrange_shape, reduce_shape, repeat_shape, simplify_dim

from ..analysis.facts import SequenceFact, StringFact, TensorFact
from ..analysis.literals import int_value

EINOPS_LAYERS = {"einops.layers.torch.Rearrange": "rearrange", "einops.layers.torch.Reduce": "reduce",
                 "einops.layers.torch.Repeat": "repeat"}
_EINOPS_SHAPES = {"rearrange": rearrange_shape, "reduce": reduce_shape, "repeat": repeat_shape}
CONVOLUTIONS = {"Conv1d": 1, "Conv2d": 2, "Conv3d": 3}


@dataclass(frozen=True)
class EinopsLayer:
    kind: str  # rearrange | reduce | repeat
    pattern: str | None  # None: not a string literal
    lengths: tuple  # ((axis name, DimExpr), ...)
    readable: bool  # every axis length could be read


def build_einops_layer(interp, kind: str, args):
    pattern = interp.eval(args.get(0, "pattern"))
    if kind == "reduce":
        interp.eval(args.get(1, "reduction"))
    lengths, readable = [], True
    for name, value in args.keywords.items():
        if name in ("pattern", "reduction"):
            continue
        dim = interp.dim_of(value)
        if dim is None:
            readable = False
        else:
            lengths.append((name, dim))
    return EinopsLayer(kind, pattern.value if type(pattern) is StringFact else None, tuple(lengths), readable)


def apply_einops_layer(layer: EinopsLayer, fact):
    """The layer's output, or a tensor of unknown shape when the pattern or a length is unknown."""
    if type(fact) is not TensorFact:
        return None
    if fact.shape is None or layer.pattern is None or not layer.readable:
        return fact.with_shape(None)
    try:
        return fact.with_shape(_EINOPS_SHAPES[layer.kind](layer.pattern, tuple(fact.shape), dict(layer.lengths)))
    except ShapeError:
        return fact.with_shape(None)


@dataclass(frozen=True)
class Convolution:
    """`nn.Conv2d(in, out, kernel_size, stride, padding, dilation, groups)` with literal or dim
    hyper-parameters; any of them None when it cannot be read."""

    rank: int
    in_channels: object
    out_channels: object
    kernel: tuple | None
    stride: tuple | None
    padding: tuple | None
    dilation: tuple | None
    groups: object


def _per_axis(interp, node, rank: int, default: int):
    """An int, a dim, or a tuple of them, for each spatial axis (None: not readable)."""
    if node is None:
        return (Const(default),) * rank
    value = int_value(node)
    if value is not None:
        return (Const(value),) * rank if value >= 0 else None
    fact = interp.eval(node)
    if type(fact) is SequenceFact and len(fact.items) == rank:
        dims = [getattr(item, "dim", None) for item in fact.items]
        return None if None in dims else tuple(dims)
    dim = interp.dim_of(node)
    return None if dim is None else (dim,) * rank


def build_convolution(interp, rank: int, args):
    padding_node = args.get(4, "padding")
    padding = None if padding_node is not None and type(interp.eval(padding_node)) is StringFact else \
        _per_axis(interp, padding_node, rank, 0)  # "same"/"valid": not modelled
    groups = args.get(6, "groups")
    for key, value in args.keywords.items():
        if key not in ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups"):
            interp.eval(value)
    return Convolution(
        rank, interp.dim_of(args.get(0, "in_channels")), interp.dim_of(args.get(1, "out_channels")),
        _per_axis(interp, args.get(2, "kernel_size"), rank, 1), _per_axis(interp, args.get(3, "stride"), rank, 1),
        padding, _per_axis(interp, args.get(5, "dilation"), rank, 1),
        Const(1) if groups is None else interp.dim_of(groups))


def convolution_output(conv: Convolution, fact):
    """[N, C_out, *spatial] with each spatial size (L + 2p - d(k-1) - 1) // s + 1, as torch documents."""
    if type(fact) is not TensorFact or fact.shape is None or len(fact.shape) not in (conv.rank + 1, conv.rank + 2):
        return None if type(fact) is not TensorFact else fact.with_shape(None)
    if None in (conv.out_channels, conv.kernel, conv.stride, conv.padding, conv.dilation):
        return fact.with_shape(None)
    spatial = []
    for size, k, s, p, d in zip(fact.shape[-conv.rank:], conv.kernel, conv.stride, conv.padding, conv.dilation):
        span = BinOp("-", BinOp("-", BinOp("+", size, BinOp("*", Const(2), p)), BinOp("*", d, BinOp("-", k, Const(1)))),
                     Const(1))
        spatial.append(simplify_dim(BinOp("+", BinOp("//", span, s), Const(1))))
    return fact.with_shape(tuple(fact.shape[:-conv.rank - 1]) + (conv.out_channels,) + tuple(spatial))


# Shape-preserving torch modules that hold parameters by default: their output needs a gradient in
# training even when their input does not (a LayerNorm right after the entry input). The keyword
# that switches the parameters off, per class.
AFFINE_SWITCH = {"LayerNorm": "elementwise_affine", "RMSNorm": "elementwise_affine", "GroupNorm": "affine",
                 "BatchNorm1d": "affine", "BatchNorm2d": "affine", "BatchNorm3d": "affine", "PReLU": None}


def has_parameters(name: str, args) -> bool:
    last = name.rsplit(".", 1)[-1]
    if last not in AFFINE_SWITCH:
        return False
    switch = AFFINE_SWITCH[last]
    value = args.keywords.get(switch) if switch else None
    return not (isinstance(value, cst.Name) and value.value == "False")
