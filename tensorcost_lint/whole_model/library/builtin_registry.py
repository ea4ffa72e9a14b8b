"""The one registry of the Python builtins and stdlib callables a whole-model run evaluates: each
name once, with its readings in the order they are tried. A reading returns UNHANDLED when it has
not evaluated the call's arguments (beyond reading a plain name, which records nothing), so the
next may read the call; one that evaluated them answers (a value, or None for unknown), so no
argument's sites are recorded twice.

The readings, by what they read:
- known_builtins / known_containers / known_math / known_regex / known_calls: values known exactly (ints,
  strings, tuples, dicts; `range`, `sorted`, `math.ceil`, `functools.partial` with `**kwargs`);
- data_instances: `isinstance` of any value the run holds, from one table of value kinds;
- python_values / zipping / lambdas: module lists and sequences of tensors (`zip(self.layers,
  self.norms)`, `map(lambda t: ..., qkv)`, `list(self.blocks)`);
- library_builtins: configs, modules and records (`getattr(config, name)`, `hasattr(self, "bias")`,
  `super()`, `tuple(outputs)`).

A bare name is a builtin unless the code shadows it (a local, a definition or an import of that
name); a stdlib callable is keyed by the name it was imported as (`from collections import
OrderedDict` → `collections.OrderedDict`). Adding one is a row here plus its row in
tests/whole_model/test_builtin_registry.py (docs/contributing/adding-a-builtin.md)."""

from __future__ import annotations

import libcst as cst

from ...analysis.interpreter import UNHANDLED
from ..python import config_copies, data_instances, known_builtins as known, known_calls, known_containers as made
from ..python import known_floats
from ..python import known_math, known_regex
from ..python import output_records, python_values, zipping
from ..values import lambdas
from . import library_builtins as library, torch_namespaces

BUILTINS = {
    "all": (known.any_all_call(True),),
    "any": (known.any_all_call(False),),
    "bool": (known.bool_call,),
    "callable": (known.callable_call,),
    "dict": (made.dict_call,),
    "dir": (torch_namespaces.dir_of,),
    "enumerate": (known.enumerate_call, zipping.enumerated),
    "filter": (known.filter_call,),
    "float": (known_floats.float_call,),
    "frozenset": (made.set_call,),
    "getattr": (library.getattr_of,),
    "hasattr": (library.hasattr_of,),
    "int": (known.int_call, library.int_of),
    "isinstance": (data_instances.isinstance_call,),
    "issubclass": (library.issubclass_of,),
    "iter": (known.iter_call,),
    "len": (known.len_call,),
    "list": (made.sequence_call, made.module_list),
    "map": (lambdas.mapped, known.map_call),
    "max": (known.extreme_call(max),),
    "min": (known.extreme_call(min),),
    "next": (known.next_call,),
    "range": (known.range_call,),
    "reversed": (made.reversed_call,),
    "round": (known_floats.round_call,),
    "set": (made.set_call,),
    "setattr": (known.setattr_call,),
    "slice": (library.slice_of,),
    "sorted": (made.sorted_call,),
    "str": (known.str_call,),
    "sum": (known.sum_call,),
    "super": (library.super_of,),
    "tuple": (made.sequence_call, library.tuple_of),
    "type": (known.type_call,),
    "zip": (known.zip_call, zipping.zipped),
}
# methods of a builtin type called on the type itself (`dict.fromkeys(keys, value)`)
TYPE_METHODS = {"dict.fromkeys": (made.fromkeys,)}
STDLIB = {
    "collections.OrderedDict": (made.dict_call,),
    "copy.copy": (config_copies.copy_call,),
    "copy.deepcopy": (config_copies.deepcopy_call,),
    "dataclasses.replace": (output_records.replace_call,),
    "functools.partial": (known_calls.partial, python_values.make_partial),
    "itertools.chain": (made.chain_call,),
    "itertools.repeat": (made.repeat_call,),
    **{name: (compute,) for name, compute in known_math.FUNCTIONS.items()},
    **{name: (compute,) for name, compute in known_regex.FUNCTIONS.items()},
}


def readings_of(interp, node: cst.Call, name: str | None) -> tuple:
    """The readings of the callee: by its imported name, or as a builtin (or a builtin type's
    method) its code does not shadow; () for any other callee."""
    if name in STDLIB:
        return STDLIB[name]
    func = node.func  # (types compared by `is`: LibCST's classes are ABCs, slow to isinstance)
    if type(func) is cst.Attribute and type(func.value) is cst.Name:
        method = f"{func.value.value}.{func.attr.value}"
        if method in TYPE_METHODS and not known.shadowed(interp, func.value.value):
            return TYPE_METHODS[method]
    if type(func) is cst.Name and func.value in BUILTINS and not known.shadowed(interp, func.value):
        return BUILTINS[func.value]
    return ()


def call_builtin(interp, node: cst.Call, args, name: str | None):
    """The first reading's answer; UNHANDLED when no reading applies (the call is not a builtin, or
    every reading left its arguments untouched)."""
    for reading in readings_of(interp, node, name):
        handled = reading(interp, args)
        if handled is not UNHANDLED:
            return handled
    return UNHANDLED


def call_builtin_value(interp, name: str, args):
    """A builtin function called through a value (`rd_round_fn(x)` of `rd_round_fn = round`): its
    readings as for the bare name; None (its arguments evaluated) when none reads the call."""
    for reading in BUILTINS.get(name, ()):
        handled = reading(interp, args)
        if handled is not UNHANDLED:
            return handled
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)
    return None
