"""Callables used as values — a class, a function, a `functools.partial` — as Python sees them when
code inspects one before calling it. A layer factory takes "a class, a partial or a name":

    def get_norm_layer(norm_layer):
        if isinstance(norm_layer, functools.partial):
            norm_kwargs.update(norm_layer.keywords)
            norm_layer = norm_layer.func
        if isinstance(norm_layer, str):
            norm_layer = _NORM_MAP[norm_layer]

so `isinstance(value, T)` of a callable is decided from what the value is (a class is an instance
of `type` and of no data type; a function of `types.FunctionType`; a partial of `functools.partial`),
and a partial's `func`, `args` and `keywords` are what it binds. Anything else stays undecided."""

from __future__ import annotations

import ast

from ...analysis.facts import SequenceFact, StringFact
from ...analysis.imports import ast_dotted_name
from ...analysis.interpreter import UNHANDLED
from ..values.inheritance import _chain, outside_bases
from ..values.library_objects import MappingFact, TorchFunction
from ..values.mapping_keys import ClassKey
from ..values.objects import ClassRef, FunctionRef
from .python_values import Partial

# types no class, function or partial is an instance of
_DATA_TYPES = frozenset({"str", "int", "float", "bool", "tuple", "list", "dict", "set", "frozenset", "bytes",
                         "slice", "complex", "torch.Tensor", "numbers.Number", "numbers.Integral"})
_CLASS = frozenset({"type", "typing.Type"})
_FUNCTION = frozenset({"types.FunctionType", "types.LambdaType"})
_BUILTIN_FUNCTION = frozenset({"types.BuiltinFunctionType", "types.BuiltinMethodType"})
_PARTIAL = frozenset({"functools.partial"})
_METHOD = frozenset({"types.MethodType"})
# what each kind of callable is an instance of, among the types a test may name (anything it may
# name that is not listed makes the test undecided)
_IS = {"class": _CLASS, "function": _FUNCTION, "builtin": _BUILTIN_FUNCTION, "partial": _PARTIAL,
       "method": _METHOD}
_NAMED = _DATA_TYPES | _CLASS | _FUNCTION | _BUILTIN_FUNCTION | _PARTIAL | _METHOD
# container ABCs: no function or partial is one; a class is one only through its metaclass (an
# Enum class is iterable), so only for a class whose metaclass is known to be `type`
_CONTAINER_ABCS = frozenset(f"{module}.{name}" for module in ("collections.abc", "typing")
                            for name in ("Iterable", "Sequence", "Collection", "Container", "Mapping", "Sized"))


def callable_kind(value) -> str | None:
    """"class", "function", "builtin", "partial" or "method" for a callable value; None otherwise."""
    if type(value) is ClassRef:
        return "class"
    if type(value) is FunctionRef:
        return "function" if value.bound is None else "method"
    if type(value) is TorchFunction:
        return "builtin"  # torch's functions are builtins or functions: only data types decide
    if type(value) is Partial:
        return value.made_by
    return None


def isinstance_decision(run, value, names: list):
    """True/False for `isinstance(value, names)` of a callable value; None when undecided (a
    type the test names that is not one of the known ones, or a value that is no callable)."""
    kind = callable_kind(value)
    # a library class used as a value is one of torch.nn's, whose metaclass is `type`
    plain = kind != "class" or type(value) is not ClassRef or _metaclass_is_type(run, value)
    known = _NAMED | _CONTAINER_ABCS if plain else _NAMED
    if kind is None or any(name is None or name not in known for name in names):
        return None
    if kind == "builtin" and any(name in _FUNCTION for name in names):
        return None  # a torch function may be a Python function or a builtin
    return any(name in _IS[kind] for name in names)


def partial_attribute(value, name: str):
    """`p.func`, `p.args`, `p.keywords` of a `functools.partial`; UNHANDLED for anything else."""
    if type(value) is not Partial or value.made_by != "partial":
        return UNHANDLED
    if name == "func":
        if value.name is None:
            return value.callee
        is_class = value.name.rsplit(".", 1)[-1][:1].isupper()  # `torch.nn.BatchNorm2d`, as library_class reads it
        return Partial(value.name, None, (), (), "class") if is_class else TorchFunction(value.name)
    if name == "args":
        return SequenceFact(tuple(value.positional))
    if name == "keywords":
        return MappingFact(tuple(value.keywords))
    return UNHANDLED


def _metaclass_is_type(run, class_ref) -> bool:
    """True when the class's whole chain is read, names no metaclass, and leaves the tree only
    for `object` or torch.nn's classes: `to_2tuple(BasicBlock)` then takes the class as no iterable."""
    chain = _chain(run, class_ref.source, class_ref.node.name.value)
    if not chain or any(keyword.arg == "metaclass" for _, node in chain for keyword in node.keywords):
        return False
    for home, base in outside_bases(chain):
        dotted = ast_dotted_name(base) if isinstance(base, (ast.Name, ast.Attribute)) else None
        if dotted == "object":
            continue
        resolved = home.ctx.settings.imports.resolve_text(dotted) if dotted else None
        if resolved is None or not resolved.startswith("torch.nn."):
            return False
    return True


def identity_key(value):
    """What a class compares and hashes by (its identity) as a set's item or a container's member:
    a ClassKey for a class of the tree, its canonical name for a library class used as a value
    (`nn.BatchNorm2d`: never a class of the tree); None for any other value."""
    if type(value) is ClassRef:
        return ClassKey(value)
    if type(value) is Partial and value.made_by == "class" and value.name is not None:
        return ("library class", value.name)
    return None


def class_name(value):
    """`cls.__name__` of a class: the name of its definition (a tree class) or the last part of its
    canonical name (`torch.nn.BatchNorm2d`, a library class used as a value); UNHANDLED otherwise."""
    if type(value) is ClassRef:
        return StringFact(value.node.name.value)
    if type(value) is Partial and value.made_by == "class" and value.name is not None:
        return StringFact(value.name.rsplit(".", 1)[-1])
    return UNHANDLED
