"""Calls: call sites first, then the shape transfer of known functions, methods and modules.

Unknown calls still have their arguments evaluated (for nested call sites) and yield no fact.
"""

from __future__ import annotations

import libcst as cst

from shape_annotations import Unknown

from .arguments import CallArgs, call_args
from .interpreter import UNHANDLED, Interpreter
from .facts import DTypeFact, ModuleFact, ScalarFact, SelfFact, TensorFact
from .imports import dotted_name
from .site_registry import FUNCTIONS as SITE_FUNCTIONS, METHODS as SITE_METHODS, MODULE_CLASSES
from . import call_sites, convolutions, module_shapes, multihead_attention, op_table


# Module classes that leave the shape of their input unchanged, matched by class name so user
# re-implementations (nanoGPT's own `LayerNorm`) count too.
SHAPE_PRESERVING_MODULES = frozenset({
    "Dropout", "Dropout1d", "Dropout2d", "AlphaDropout", "LayerNorm", "RMSNorm", "GroupNorm",
    "BatchNorm1d", "BatchNorm2d", "InstanceNorm1d", "LlamaRMSNorm", "GELU", "ReLU", "SiLU", "Tanh",
    "Sigmoid", "Softmax", "LogSoftmax", "Identity", "Mish", "LeakyReLU", "ELU", "Hardswish", "SELU",
    "Softplus", "NewGELUActivation", "GELUActivation", "QuickGELU", "Swish",
    "HookPoint",  # TransformerLens: an identity module that exposes activations to hooks
    # more elementwise activations and norms (checked on torch's ModuleInfo samples, tests/conformance)
    "BatchNorm3d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "CELU", "Hardshrink", "Hardtanh",
    "ReLU6", "LogSigmoid", "Softmax2d", "Softmin", "Softshrink", "Softsign", "Tanhshrink", "Threshold",
    "Hardsigmoid",
})


def module_constructor(interp, name: str, args: CallArgs):
    """`nn.Linear(in, out)` and shape-preserving modules, as ModuleFacts."""
    last = name.rsplit(".", 1)[-1]
    spec = MODULE_CLASSES.get(last)
    if spec is not None and spec.operation == "convolution" and name.startswith("torch.nn"):
        return convolutions.conv_module(interp, name, spec, args)
    if spec is not None and (name.startswith("torch.nn") or "." not in name or name.startswith("nn.")):
        lazy = last == "LazyLinear"  # nn.LazyLinear(out_features): in_features come from the first input
        in_node = None if lazy else args.get(0, "in_features")
        out_node = args.get(0 if lazy else 1, "out_features")
        if out_node is None or (in_node is None and not lazy):
            return None
        dtype_node = args.keywords.get("dtype")
        dtype_fact = interp.eval(dtype_node) if dtype_node is not None else None
        dtype = dtype_fact.dtype if type(dtype_fact) is DTypeFact else None
        # an unreadable size is an Unknown dim (never None): the weight keeps its rank of 2
        in_dim = None if lazy else interp.dim_of(in_node) or Unknown("in_features")
        out_dim = interp.dim_of(out_node) or Unknown("out_features")
        return ModuleFact("linear", in_dim, out_dim, dtype, spec)
    if name.startswith("torch.nn.") and last == "MultiheadAttention":
        return multihead_attention.module_fact(interp, args)
    if name.startswith("torch.nn."):
        reshaping = module_shapes.module_fact(interp, last, args)  # padding, adaptive pooling
        if reshaping is not None:
            return reshaping
    if last in SHAPE_PRESERVING_MODULES:
        for value in [*args.positional, *args.keywords.values()]:
            interp.eval(value)
        return ModuleFact("preserve")
    return None


def evaluate_call(interp: Interpreter, node: cst.Call):
    func = node.func
    args = call_args(node)
    name = interp.ctx.settings.imports.resolve(func)
    handled = interp.call_code(node, args, name)
    if handled is not UNHANDLED:
        return handled
    if _returns_scalar(interp, func, name):
        _walk_args(interp, args)
        return ScalarFact()
    if name is not None:
        if name in SITE_FUNCTIONS:
            return call_sites.record_function_site(interp, node, name, args)
        transfer = op_table.FUNCTIONS.get(name)
        if transfer is not None:
            return transfer(interp, args)
        if name.startswith(("torch.nn.", "flax.", "equinox.")) or name in ("torch.nn",):
            if name.rsplit(".", 1)[-1] in ("Parameter", "Buffer"):
                return interp.eval(args.get(0, "data"))
            module = module_constructor(interp, name, args)
            if module is not None:
                return module
    if isinstance(func, cst.Attribute):
        receiver = interp.eval(func.value) if name is None else None
        method = func.attr.value
        if type(receiver) is TensorFact:
            if method in SITE_METHODS:
                return call_sites.record_method_site(interp, node, receiver, method, args)
            transfer = op_table.METHODS.get(method)
            if transfer is not None:
                return transfer(interp, receiver, args)
        elif type(receiver) is SelfFact or receiver is not None:
            callee = interp.attribute_of(receiver, method)
            if type(callee) is ModuleFact:
                return call_module(interp, node, callee, args)
        _walk_args(interp, args)
        return None
    if isinstance(func, cst.Name):
        callee = interp.env.get(func.value)
        if type(callee) is ModuleFact:
            return call_module(interp, node, callee, args)
        local = dotted_name(func)
        if local is not None and local.rsplit(".", 1)[-1] in SHAPE_PRESERVING_MODULES:
            _walk_args(interp, args)
            return ModuleFact("preserve")
    else:
        interp.eval(func)
    _walk_args(interp, args)
    return None


_SCALAR_BUILTINS = frozenset({"float", "int", "len", "round", "abs", "bool", "complex"})


def _returns_scalar(interp, func, name: str | None) -> bool:
    """`math.sqrt(d)`, `float(x)`, `len(xs)`: Python numbers, so `att * scale` keeps att's shape."""
    if name is not None and name.startswith("math."):
        return True
    return isinstance(func, cst.Name) and func.value in _SCALAR_BUILTINS and func.value not in interp.env


def call_module(interp, node, module: ModuleFact, args: CallArgs):
    if module.kind == "linear":
        return call_sites.record_linear_module(interp, node, module, args)
    if module.kind == "conv":
        return call_sites.record_convolution(interp, node, module, args)
    if module.kind == multihead_attention.KIND:
        return multihead_attention.call(interp, node, module, args)
    if module.kind in module_shapes.RESHAPING_KINDS:
        first = interp.eval(args.get(0, "input"))
        for value in [*args.positional[1:], *args.keywords.values()]:
            interp.eval(value)
        return module_shapes.call(module, first, interp.ctx.settings.sizes)
    first = interp.eval(args.get(0)) if args.positional else None
    for value in [*args.positional[1:], *args.keywords.values()]:
        interp.eval(value)
    return first.with_shape(first.shape) if type(first) is TensorFact else None


def _walk_args(interp, args: CallArgs) -> None:
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)

