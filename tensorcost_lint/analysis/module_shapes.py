"""nn modules that change only the trailing (spatial) dims, without a call site: padding
(`nn.ZeroPad2d(1)`, `nn.ReflectionPad1d((2, 3))`...), adaptive pooling (`nn.AdaptiveAvgPool2d(3)`)
and window pooling (`nn.MaxPool2d(3, 2, 1)`, window_pooling.py).

Each is a ModuleFact of one of RESHAPING_KINDS whose `options` hold what the call needs;
the shapes are torch's (checked against torch's ModuleInfo samples in tests/conformance).
"""

from __future__ import annotations

import re

from shape_annotations import BinOp, Const, simplify_dim

from .facts import ModuleFact, SequenceFact, TensorFact
from .literals import int_value
from . import window_pooling

# the kinds of ModuleFact this module and window_pooling make: they reshape, hold no parameters, cost no FLOPs
RESHAPING_KINDS = frozenset({"pad", "adaptive_pool", window_pooling.KIND})

_PAD = re.compile(r"(Zero|Constant|Reflection|Replication|Circular)Pad([123])d")
_ADAPTIVE = re.compile(r"Adaptive(Avg|Max)Pool([123])d")


def modelled_classes() -> list[str]:
    """Every class name `modelled` accepts (the docs' list)."""
    pads = [f"{kind}Pad{rank}d" for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular")
            for rank in (1, 2, 3)]
    pools = [f"{prefix}{kind}Pool{rank}d" for prefix in ("Adaptive", "") for kind in ("Avg", "Max") for rank in (1, 2, 3)]
    return [name for name in pads + pools if modelled(name)]


def modelled(class_name: str) -> bool:
    return bool(_PAD.fullmatch(class_name) or _ADAPTIVE.fullmatch(class_name)) or window_pooling.modelled(class_name)


def _ints(node, count: int, allow_none: bool = False):
    """An int (repeated `count` times) or a tuple/list of `count` ints (None items if allowed)."""
    value = int_value(node) if node is not None else None
    if value is not None:
        return (value,) * count
    elements = getattr(node, "elements", None)
    if elements is None or len(elements) != count:
        return None
    items = []
    for element in elements:
        item = int_value(element.value)
        none = allow_none and getattr(element.value, "value", None) == "None"
        if item is None and not none:
            return None
        items.append(item)
    return tuple(items)


def adaptive_sizes(node, rank: int):
    """An adaptive pooling's output_size: an int for every dim, or a tuple (None keeps a dim)."""
    return _ints(node, rank, allow_none=True)


def module_fact(interp, last: str, args) -> ModuleFact | None:
    """The module fact of a padding or adaptive pooling class, or None for any other class."""
    pad, adaptive = _PAD.fullmatch(last), _ADAPTIVE.fullmatch(last)
    if pad is None and adaptive is None:
        return window_pooling.module_fact(interp, last, args)
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)
    if pad is not None:
        rank = int(pad.group(2))
        amounts = _ints(args.get(0, "padding"), 2 * rank)
        return ModuleFact("pad", options=(rank, amounts))
    rank = int(adaptive.group(2))
    sizes = adaptive_sizes(args.get(0, "output_size"), rank)
    indices = args.get(1, "return_indices")
    if indices is not None and getattr(indices, "value", None) not in ("True", "False"):
        sizes = None  # whether it returns (values, indices) is not known
    with_indices = indices is not None and getattr(indices, "value", None) == "True"
    return ModuleFact("adaptive_pool", options=(rank, sizes, with_indices))


def call(module: ModuleFact, x, sizes=None):
    """The output of calling a pad or pooling module on `x` (batched or not); `sizes` (the declared
    dims) lets a window pooling floor a size as torch does."""
    if module.kind == window_pooling.KIND:
        return window_pooling.pooled(module, x, sizes or {})
    if type(x) is not TensorFact:
        return None
    rank = module.options[0]
    if x.shape is None or len(x.shape) not in (rank + 1, rank + 2) or module.options[1] is None:
        return x.with_shape(None)
    head, spatial = tuple(x.shape[:-rank]), tuple(x.shape[-rank:])
    if module.kind == "pad":
        amounts = module.options[1]  # (left, right) of the last dim first, as F.pad reads them
        grown = []
        for index, dim in enumerate(reversed(spatial)):
            extra = amounts[2 * index] + amounts[2 * index + 1]
            grown.append(dim if extra == 0 else simplify_dim(BinOp("+", dim, Const(extra)) if extra > 0
                                                             else BinOp("-", dim, Const(-extra))))
        return x.with_shape(head + tuple(reversed(grown)))
    sizes, with_indices = module.options[1], module.options[2]
    out = tuple(dim if size is None else Const(size) for dim, size in zip(spatial, sizes))
    values = x.with_shape(head + out)
    return SequenceFact((values, values.with_dtype("int64"))) if with_indices else values
