"""`cls(...)` as Python makes the object: `cls.__new__(cls, *args, **kwargs)` first when a class of
the chain defines `__new__`, then `__init__` on the result only when it is a new object of `cls`.
A `__new__` may hand back another object instead — a factory that returns a plain layer when no
rank is given (`return nn.Linear(dim_in, dim_out)`), whose own `__init__` then never runs.

`super().__new__(cls)` (or `object.__new__(cls)`) inside it is object's: a FreshObject, when no other
class up the chain (of the tree or a library base other than torch's modules) defines `__new__`;
otherwise unknown, never a guess."""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.imports import ast_dotted_name
from ...analysis.interpreter import UNHANDLED
from ..values.inheritance import _chain, find_method, outside_bases
from ..values.objects import ClassRef, FreshObject
from . import call_binding

# bases outside the tree whose `__new__` is object's: a subclass's `super().__new__(cls)` makes a plain object
_OBJECT_NEW_BASES = ("object", "torch.nn.Module", "torch.nn.modules.module.Module")


def new_method(run, class_ref: ClassRef):
    """(file, cst.FunctionDef) of the `__new__` the class resolves, or None (object's)."""
    return find_method(run, class_ref.source, class_ref.node, "__new__")


def object_new(interp, node: cst.Call, args):
    """`super().__new__(cls, ...)` / `object.__new__(cls)` inside the `__new__` running now;
    UNHANDLED for any other call."""
    func = node.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "__new__"):
        return UNHANDLED
    base = func.value
    is_super = isinstance(base, cst.Call) and isinstance(base.func, cst.Name) and base.func.value == "super" \
        and not base.args
    is_object = isinstance(base, cst.Name) and base.value == "object" and base.value not in interp.env
    if not (is_super or is_object):
        return UNHANDLED
    positional, _ = call_binding.evaluate_arguments(interp, args)
    cls = positional[0] if positional else None
    run = interp.run
    if type(cls) is not ClassRef or not run.frames:
        return None
    if is_object:
        return FreshObject(cls)
    running = run.frames[-1][0]
    found = new_method(run, cls)
    chain = _chain(run, cls.source, cls.node.name.value)
    if found is None or found[1] is not running or not chain:
        return None  # not called from the class's own `__new__`: which one runs next is not read here
    owner = run.method_owner.get(id(running)) or chain[0][1]
    if find_method(run, cls.source, cls.node, "__new__", after=owner) is not None:
        return None  # a base's own `__new__` runs next
    for home, expression in outside_bases(chain):
        dotted = ast_dotted_name(expression) if isinstance(expression, (ast.Name, ast.Attribute)) else None
        name = home.ctx.settings.imports.resolve_text(dotted) if dotted else None
        if (name or dotted) not in _OBJECT_NEW_BASES:
            return None  # a library base may define its own
    return FreshObject(cls)
