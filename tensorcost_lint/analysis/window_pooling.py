"""Window pooling: `nn.MaxPool1d/2d/3d`, `nn.AvgPool1d/2d/3d` and their functional forms
(`F.max_pool2d`, `F.avg_pool2d`, ...). The output is the input with each spatial dim pooled as torch
computes it (`pooling_output_shape` in ATen):

    out = (L + 2p - d(k-1) - 1 + (s-1 if ceil_mode else 0)) // s + 1
    and with ceil_mode, one less when the last window would start inside the right padding

`stride` defaults to the kernel; average pooling has no dilation. FlopCounterMode counts no FLOPs
for pooling, so no call site is recorded: only the shape (and, with `return_indices`, the int64
indices) flows on. The module and the function read their arguments in different orders, so each
form has its own table of positions. Checked against torch's OpInfo and ModuleInfo samples in
tests/conformance."""

from __future__ import annotations

import re

import libcst as cst
from shape_annotations import Const, evaluate_integer

from .convolutions import ConvOptions, per_axis, output_spatial
from .facts import ModuleFact, SequenceFact, TensorFact
from .literals import bool_value

_CLASS = re.compile(r"(Max|Avg)Pool([123])d")
# argument positions after the kernel size (the module's first argument, the function's second)
_MODULE_ORDER = {"max": ("stride", "padding", "dilation", "return_indices", "ceil_mode"),
                 "avg": ("stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")}
_FUNCTION_ORDER = {"max": ("stride", "padding", "dilation", "ceil_mode", "return_indices"),
                   "avg": ("stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")}
KIND = "window_pool"


def modelled(class_name: str) -> bool:
    return _CLASS.fullmatch(class_name) is not None


def _flag(node) -> bool | None:
    """A literal bool (an absent argument is False); None when not readable."""
    return False if node is None else bool_value(node)


def _options(interp, args, kind: str, rank: int, first: int, order: tuple):
    """(ConvOptions, ceil_mode, return_indices) read from the call's arguments; None where unreadable."""
    def arg(name):
        return args.get(first + 1 + order.index(name), name) if name in order else None

    kernel = per_axis(interp, args.get(first, "kernel_size"), rank, 1)
    stride_node = arg("stride")
    if stride_node is None or isinstance(stride_node, cst.Name) and stride_node.value == "None" \
            or isinstance(stride_node, (cst.List, cst.Tuple)) and not stride_node.elements:
        stride = kernel  # torch: stride defaults to kernel_size (an empty list too, for the functions)
    else:
        stride = per_axis(interp, stride_node, rank, 1)
    padding = per_axis(interp, arg("padding"), rank, 0)
    dilation = per_axis(interp, arg("dilation"), rank, 1)
    return ConvOptions(kernel, stride, padding, dilation, Const(1)), _flag(arg("ceil_mode")), \
        _flag(arg("return_indices")) if kind == "max" else False


def _rest(interp, args, first: int, order: tuple) -> None:
    """Evaluate what `_options` did not read (each argument once: the hyper-parameters `_options`
    read as dims, the rest here)."""
    read = 1 + first + len(order)
    for value in args.positional[read:]:
        interp.eval(value)
    for key, value in args.keywords.items():
        if key not in ("input", "kernel_size", *order):
            interp.eval(value)


def module_fact(interp, last: str, args) -> ModuleFact | None:
    """`nn.MaxPool2d(3, stride=2, padding=1)`: a ModuleFact of kind "window_pool"."""
    found = _CLASS.fullmatch(last)
    if found is None:
        return None
    kind, rank = found.group(1).lower(), int(found.group(2))
    options = _options(interp, args, kind, rank, 0, _MODULE_ORDER[kind])
    _rest(interp, args, 0, _MODULE_ORDER[kind])
    return ModuleFact(KIND, options=(rank, *options))


def pooled(module: ModuleFact, x, sizes):
    """The output of a window pooling module on `x` ([N, C, *spatial] or [C, *spatial])."""
    if type(x) is not TensorFact:
        return None
    rank, options, ceil_mode, with_indices = module.options
    if x.shape is None or len(x.shape) not in (rank + 1, rank + 2) or ceil_mode is None or with_indices is None:
        return x.with_shape(None)
    head, spatial = tuple(x.shape[:-rank]), tuple(x.shape[-rank:])
    out = _ceil_spatial(options, spatial, sizes) if ceil_mode else output_spatial(options, spatial, sizes)
    values = x.with_shape(None if out is None else head + out)
    return SequenceFact((values, values.with_dtype("int64"))) if with_indices else values


def _ceil_spatial(options: ConvOptions, spatial, sizes):
    """ceil_mode: torch's rounding up, on known numbers only (an expression would need a ceiling)."""
    if None in (options.kernel, options.stride, options.padding, options.dilation):
        return None
    out = []
    for size, k, s, p, d in zip(spatial, options.kernel, options.stride, options.padding, options.dilation):
        numbers = [evaluate_integer(dim, sizes) for dim in (size, k, s, p, d)]
        if None in numbers or numbers[2] <= 0:
            return None
        length, kernel, stride, padding, dilation = numbers
        count = (length + 2 * padding - dilation * (kernel - 1) - 1 + stride - 1) // stride + 1
        if (count - 1) * stride >= length + padding:
            count -= 1  # the last window would start in the right padding
        if count < 1:
            return None
        out.append(Const(count))
    return tuple(out)


def _functional(kind: str, rank: int):
    def transfer(interp, args):
        node = args.get(0, "input")
        x = interp.eval(node) if node is not None else None
        options = _options(interp, args, kind, rank, 1, _FUNCTION_ORDER[kind])
        _rest(interp, args, 1, _FUNCTION_ORDER[kind])
        return pooled(ModuleFact(KIND, options=(rank, *options)), x, interp.ctx.settings.sizes)

    return transfer
