"""nn modules that only reshape, without a call site: padding (`nn.ZeroPad2d(1)`,
`nn.ReflectionPad1d((2, 3))`...), adaptive pooling (`nn.AdaptiveAvgPool2d(3)`), window pooling
(`nn.MaxPool2d(3, 2, 1)`, window_pooling.py) and `nn.Flatten(start_dim=1, end_dim=-1)` (a
classifier's pooled [N, C, 1, 1] made [N, C]).

Each is a ModuleFact of one of RESHAPING_KINDS whose `options` hold what the call needs;
the shapes are torch's (checked against torch's ModuleInfo samples in tests/conformance).
"""

from __future__ import annotations

import re

from shape_annotations import BinOp, Const, simplify_dim

from .facts import DimFact, IntFact, ModuleFact, SequenceFact, TensorFact
from .literals import int_value
from . import shape_ops, unfolding, window_pooling

# the kinds of ModuleFact this module and window_pooling make: they reshape, hold no parameters, cost no FLOPs
RESHAPING_KINDS = frozenset({"pad", "adaptive_pool", "flatten", window_pooling.KIND, unfolding.KIND})

_PAD = re.compile(r"(Zero|Constant|Reflection|Replication|Circular)Pad([123])d")
_ADAPTIVE = re.compile(r"Adaptive(Avg|Max)Pool([123])d")


def modelled_classes() -> list[str]:
    """Every class name `modelled` accepts (the docs' list)."""
    pads = [f"{kind}Pad{rank}d" for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular")
            for rank in (1, 2, 3)]
    pools = [f"{prefix}{kind}Pool{rank}d" for prefix in ("Adaptive", "") for kind in ("Avg", "Max") for rank in (1, 2, 3)]
    return [name for name in pads + pools + ["Flatten", "Unfold"] if modelled(name)]


def modelled(class_name: str) -> bool:
    return bool(_PAD.fullmatch(class_name) or _ADAPTIVE.fullmatch(class_name)) or class_name in ("Flatten", "Unfold") \
        or window_pooling.modelled(class_name)


def _ints(node, count: int, allow_none: bool = False, fact=None):
    """An int (repeated `count` times) or a tuple/list of `count` ints (None items if allowed), as
    written or, given `fact` (the argument's evaluated value: `output_size` passed down as a
    parameter), as computed."""
    value = int_value(node) if node is not None else None
    if value is not None:
        return (value,) * count
    elements = getattr(node, "elements", None)
    if elements is None or len(elements) != count:
        return _known_ints(fact, count)
    items = []
    for element in elements:
        item = int_value(element.value)
        none = allow_none and getattr(element.value, "value", None) == "None"
        if item is None and not none:
            return None
        items.append(item)
    return tuple(items)


def _known_int(fact):
    if type(fact) is DimFact and type(fact.dim) is Const:
        return fact.dim.value
    return fact.value if type(fact) is IntFact else None


def _known_ints(fact, count: int):
    if _known_int(fact) is not None:
        return (_known_int(fact),) * count
    if type(fact) is not SequenceFact or len(fact.items) != count:
        return None
    items = tuple(_known_int(item) for item in fact.items)
    return None if None in items else items  # (a computed None item is not told from an unknown one here)


def adaptive_sizes(node, rank: int, fact=None):
    """An adaptive pooling's output_size: an int for every dim, or a tuple (None keeps a dim)."""
    return _ints(node, rank, allow_none=True, fact=fact)


def module_fact(interp, last: str, args) -> ModuleFact | None:
    """The module fact of a padding or adaptive pooling class, or None for any other class."""
    pad, adaptive = _PAD.fullmatch(last), _ADAPTIVE.fullmatch(last)
    if last == "Unfold":
        return unfolding.module_fact(interp, args)
    if pad is None and adaptive is None and last != "Flatten":
        return window_pooling.module_fact(interp, last, args)
    facts = {id(value): interp.eval(value) for value in [*args.positional, *args.keywords.values()]}
    if last == "Flatten":  # torch's defaults: start_dim=1, end_dim=-1
        start, end = args.get(0, "start_dim"), args.get(1, "end_dim")
        start = 1 if start is None else int_value(start)
        end = -1 if end is None else int_value(end)
        return ModuleFact("flatten", options=(None if start is None or end is None else (start, end),))
    if pad is not None:
        rank = int(pad.group(2))
        padding = args.get(0, "padding")
        amounts = _ints(padding, 2 * rank, fact=facts.get(id(padding)))
        return ModuleFact("pad", options=(rank, amounts))
    rank = int(adaptive.group(2))
    output_size = args.get(0, "output_size")
    sizes = adaptive_sizes(output_size, rank, facts.get(id(output_size)))
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
    if module.kind == unfolding.KIND:
        return unfolding.unfolded(module, x, sizes or {})
    if type(x) is not TensorFact:
        return None
    if module.kind == "flatten":
        bounds = module.options[0]
        return x.with_shape(None if bounds is None else shape_ops.flattened(x.shape, *bounds))
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
