"""Class decorators that rewrite the class they are given.

Python binds a decorated class's name to what its decorators return, applied bottom-up when the
class statement runs. Most class decorators of model code return the class unchanged as far as
costs go (`@dataclass` is read elsewhere, docstring tools edit `__doc__`, hub-kernel hooks return
`cls` when no kernel is installed); some rewrite its methods: transformers'
`@use_experts_implementation` replaces `forward` with a closure that dispatches on
`config._experts_implementation` and `__init__` with one that also sets `self.config`. A run that
ignores them runs the wrong forward.

A decorator is run when it is a function of the analysed tree whose code writes an attribute of a
parameter it is given (`experts_class.forward = forward`, `setattr(cls, ...)`) — the only way a
decorator that returns the class it got can change it. Each decorated class is decorated once, the
first time the run looks a name up on it; the class's attributes written during that call are its
patches, read before the class body's own definitions (the class statement's dict, then the
decorator's writes replace entries of it). A decorator that does not write attributes is not run:
running `auto_docstring`'s string formatting on every class would cost time and change nothing.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..values.inheritance import _chain, _defines
from ..values.objects import ClassRef, FunctionRef


def class_key(source, name: str) -> tuple:
    return (source.path, name)


def patched_member(run, source, cls_name: str, name: str, after=None):
    """The value a decorator wrote for `name` on the class `cls_name` of `source` or the first class
    of its chain (after the ast.ClassDef `after`, for `super()`) that has `name`, or None when the
    chain's own definition (or nothing) gives it."""
    chain = _chain(run, source, cls_name)
    start = 0
    if after is not None:
        positions = [i for i, (_, node) in enumerate(chain) if node is after]
        start = positions[0] + 1 if positions else len(chain)
    for home, node in chain[start:]:
        patches = applied(run, home, node)
        if name in patches:
            return patches[name]
        if _defines(node, name) or _assigns(node, name):
            return None
    return None


def applied(run, home, node: ast.ClassDef) -> dict:
    """The attributes the class's decorators wrote on it ({} when none did), running them once."""
    key = class_key(home, node.name)
    patches = run.class_patches.get(key)
    if patches is not None:
        return patches
    run.class_patches[key] = patches = {}  # a decorator reading its own class sees it undecorated
    if not node.decorator_list:
        return patches
    # a base's class statement ran before this one's, its decorators with it: decorating the class
    # finds its bases decorated already (`@strict` on a config and on its parent is two calls one
    # after the other, never one inside the other)
    for base_home, base in _chain(run, home, node.name)[1:]:
        applied(run, base_home, base)
    found = run.tree.definition(home, node.name)
    if found is None or not isinstance(found[1], cst.ClassDef):
        return patches
    source, cls = found
    for decorator in reversed(cls.decorators):  # Python applies the nearest decorator first
        evaluator = run.module_evaluator(source)
        with run.collecting([]):  # decorating a class costs nothing we count
            run.building += 1
            try:
                function = evaluator.eval(decorator.decorator)
                if type(function) is FunctionRef and _writes_attributes(function.node):
                    run._invoke(function, [ClassRef(source, cls)], {}, decorator.decorator)
            finally:
                run.building -= 1
    return patches


def bound(value, instance):
    """A patched function read through an instance is a method bound to it, as a class's def is."""
    if type(value) is FunctionRef and value.bound is None:
        return FunctionRef(value.source, value.node, instance, value.closure)
    return value


def _assigns(node: ast.ClassDef, name: str) -> bool:
    """The class body binds `name` to a value (`_apply_gate = staticmethod(...)`, `has_gate = True`)."""
    for statement in node.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else \
            [statement.target] if isinstance(statement, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


class _AttributeWrites(cst.CSTVisitor):
    """Whether a function (its nested functions included) writes an attribute of one of its own
    parameters, or calls `setattr` on one."""

    def __init__(self):
        self.parameters: set[str] = set()
        self.found = False

    def visit_Parameters(self, node: cst.Parameters) -> None:
        for param in (*node.posonly_params, *node.params, *node.kwonly_params):
            self.parameters.add(param.name.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "setattr" and node.args \
                and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value in self.parameters:
            self.found = True

    def _target(self, target) -> None:
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value in self.parameters and target.attr.value != "__doc__":
            self.found = True


def _writes_attributes(function: cst.FunctionDef) -> bool:
    visitor = _AttributeWrites()
    function.visit(visitor)
    return visitor.found
