"""`rd_round_fn = rd_round_fn or round`, `key=len`: a builtin function of Python used as a value.
It is a value like a library function (a Partial that binds nothing, `made_by="builtin"`), so `or`
picks it, `isinstance(f, types.BuiltinFunctionType)` and `callable(f)` read it, and calling it
runs the builtin's reading in the registry (library/builtin_registry.py: `call_builtin_value`),
as calling the name would. Only Python's builtin functions are values here; its classes (`int`,
`tuple`, `range`) are not."""

from __future__ import annotations

import builtins
import types

from .known_builtins import shadowed
from .python_values import Partial

PREFIX = "builtins."


def builtin_function(interp, name: str):
    """The value of the bare name `name` when it is one of Python's builtin functions the code does
    not rebind; None otherwise."""
    if not isinstance(getattr(builtins, name, None), types.BuiltinFunctionType) or shadowed(interp, name):
        return None
    return Partial(PREFIX + name, None, (), (), "builtin")
