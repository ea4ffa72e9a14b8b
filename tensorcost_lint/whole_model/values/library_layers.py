"""Library layers a whole-model run builds and applies besides the call-site modules (`nn.Linear`,
`nn.Conv2d`): einops' `Rearrange`, `Reduce` and `Repeat` layers (vit-pytorch's patch embedding),
with the output shape einops documents, and which shape-preserving torch modules hold parameters."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from shape_annotations import ShapeError, rearrange_shape, reduce_shape, repeat_shape

from ...analysis.facts import StringFact, TensorFact

EINOPS_LAYERS = {"einops.layers.torch.Rearrange": "rearrange", "einops.layers.torch.Reduce": "reduce",
                 "einops.layers.torch.Repeat": "repeat"}
_EINOPS_SHAPES = {"rearrange": rearrange_shape, "reduce": reduce_shape, "repeat": repeat_shape}


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
