"""`nn.Module.to(...)`, `.float()`, `.half()`, `.cpu()` ... on a module of the analysed tree: torch
moves or casts the module's parameters and buffers in place and returns the module itself
(`self.norm = RMSNorm(d).to(dtype=torch.float32)` keeps the norm object).

A device move changes nothing the run counts. A cast changes the dtype of every floating
parameter and buffer below the module (integer buffers stay, as torch leaves them), which the
memory figures read. The cast is applied where the run can write it: tensors and layers held as
attributes of the module objects of the tree, through module lists and dicts of such objects. A
module holding something else that has parameters (an embedding, a container of torch layers)
is not cast: the call stays unknown, as before, rather than leave a parameter in the old dtype."""

from __future__ import annotations

import dataclasses

from ...analysis import dtype_rules, op_table
from ...analysis.facts import DTypeFact, ModuleFact, SelfFact, StringFact, TensorFact
from ...analysis.interpreter import UNHANDLED
from ..values.objects import Embedding, ModuleDict, ModuleList, Sequential

DEVICE_MOVES = frozenset({"cpu", "cuda", "requires_grad_", "share_memory"})
DTYPE_CASTS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16"}
MAX_MODULES = 100_000  # modules cast per call: a bound on a hostile tree of modules
_TO_KEYWORDS = frozenset({"device", "dtype", "non_blocking", "memory_format", "copy"})
METHODS = frozenset({"to", *DEVICE_MOVES, *DTYPE_CASTS})


def call_on_value(interp, func, args):
    """`Norm(d).to(dtype=torch.float32)`, `make_mask(x).float()`: the receiver, a call, evaluated
    once, then the method applied to its value — a module of the tree moved or cast, a tensor by the
    transfer tables; anything else unknown."""
    receiver = interp.eval(func.value)
    name = func.attr.value
    if type(receiver) is SelfFact and interp.run.instance(receiver) is not None:
        done = moved_or_cast(interp, receiver, name, args)
        if done is not UNHANDLED:
            return done
    elif type(receiver) is TensorFact and name in op_table.METHODS:
        return op_table.METHODS[name](interp, receiver, args)
    _evaluate(interp, args)
    return None


def moved_or_cast(interp, root: SelfFact, method: str, args):
    """The module after `root.<method>(...)`, or UNHANDLED when the call is not one of these or
    its dtype (or the module's layers) cannot be read."""
    if method in DEVICE_MOVES:
        _evaluate(interp, args)
        return root
    if method in DTYPE_CASTS and not args.positional and not args.keywords:
        return _cast(interp.run, root, DTYPE_CASTS[method])
    if method != "to" or args.starred or set(args.keywords) - _TO_KEYWORDS:
        return UNHANDLED
    dtype = _target_dtype(interp, args)
    if dtype is UNHANDLED:
        return UNHANDLED
    return root if dtype is None else _cast(interp.run, root, dtype)


def _evaluate(interp, args) -> None:
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)


def _target_dtype(interp, args):
    """`to(torch.float32)`, `to(dtype=...)`, `to(device)`, `to("cuda", torch.bfloat16)`, `to(tensor)`:
    the dtype cast to, None for a move only, UNHANDLED when an argument may be a dtype unknown here."""
    dtype = None
    for value in args.positional:
        fact = interp.eval(value)
        if type(fact) is DTypeFact and fact.dtype is not None:
            dtype = fact.dtype
        elif type(fact) is TensorFact:  # `.to(other)`: other's dtype and device
            if fact.dtype is None:
                return UNHANDLED
            dtype = fact.dtype
        elif type(fact) is not StringFact:  # a device object or an unknown value: perhaps a dtype
            return UNHANDLED
    for key, value in args.keywords.items():
        fact = interp.eval(value)
        if key == "dtype":
            if type(fact) is not DTypeFact or fact.dtype is None:
                return UNHANDLED
            dtype = fact.dtype
    return dtype


def _cast(run, root: SelfFact, dtype: str):
    modules = _modules(run, root)
    if modules is None:
        return UNHANDLED
    for module in modules:
        for name, value in list(module.attributes.items()):
            if type(value) is TensorFact and _is_cast(value.dtype):
                cast = module.attributes[name] = value.with_dtype(dtype)
                if run.grad.get(id(value)) is value:
                    run.mark(cast)  # a parameter cast in place stays one: it needs a gradient
                layout = run.storage.layout(value)
                if layout is not None:  # a new storage in the new dtype: a parameter stays one
                    run.storage.fresh(cast, parameter=layout.storage.parameter)
            elif type(value) is ModuleFact and _is_cast(value.dtype):
                cast = dataclasses.replace(value, dtype=dtype)
                if run.has_parameters(value):
                    run.parametrised(cast)
                run.parameters.recast(value, cast, lambda held: dtype if _is_cast(held) else held)
                module.attributes[name] = cast
    return root


def _is_cast(dtype) -> bool:
    return dtype is None or dtype_rules.is_floating(dtype)  # None: the default float dtype


def _modules(run, root: SelfFact):
    """The module objects below `root` (itself included), or None when one holds layers the cast
    cannot be written into."""
    found, pending, seen = [], [root], set()
    while pending:
        value = pending.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if len(seen) > MAX_MODULES:
            return None
        if type(value) is SelfFact:
            if run.instance(value) is None or run.instance(value).contents is not None:
                return None  # `class Proj(nn.Linear)`: the layer is the object itself
            found.append(value)
            pending.extend(value.attributes.values())
        elif type(value) in (ModuleList, Sequential):
            pending.extend(_held(value.items))
            if any(type(item) is not SelfFact for item in value.items):
                return None
        elif type(value) is ModuleDict:
            if any(type(item) is not SelfFact for _, item in value.items):
                return None
            pending.extend(item for _, item in value.items)
        elif type(value) is Embedding:
            return None
    return found


def _held(items):
    return [item for item in items if type(item) is SelfFact]
