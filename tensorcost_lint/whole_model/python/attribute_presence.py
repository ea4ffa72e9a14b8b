"""`hasattr(obj, "name")` on an object the run built: True when it holds the attribute (or a class of
its chain defines it), False only when the run saw every attribute the object can hold, else unknown.

RoFormer's `if config.embedding_size != config.hidden_size: self.embeddings_project = nn.Linear(...)`
and, in `forward`, `if hasattr(self, "embeddings_project")`: with the config read, the constructor
decided not to set it, so the answer is False — but only when nothing could have set it out of
sight. The object's attributes are complete when:
- its class chain is all in the analysed tree, down to `nn.Module` (an outside base's `__init__` or
  class body could hold anything; a torch layer base such as `nn.Linear` holds its own attributes);
- no call the run did not follow was handed it (as receiver or argument: a call outside the tree may
  set anything on what it is given; nn.Module's own methods that add no attribute excepted), and its
  build hit no limit;
- no `setattr(obj, name, ...)` with a name the run does not know reached it;
- the name was not set on one side only of an undecided `if` (then it may or may not be there).
"""

from __future__ import annotations

import ast

from ..values.identity import Pair
from ...analysis.facts import SelfFact
from ...analysis.imports import ast_dotted_name
from ..source import module_bindings
from ..values.inheritance import _chain
from ..values.objects import BoolFact, ClassRef, ModuleRef

# what `type` gives every class, whatever its body (`hasattr(config_class, "__name__")`)
_EVERY_CLASS_HAS = frozenset({"__name__", "__qualname__", "__module__", "__dict__", "__doc__", "__mro__", "__bases__",
                              "__class__", "__init__", "__new__", "__subclasses__"})
_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "object"})

# What every nn.Module holds (torch 2.13, `dir(torch.nn.Module())` less dunders): its methods, and the
# attributes `nn.Module.__init__` sets — `hasattr(self, "training")` is True on any module.
NN_MODULE_ATTRIBUTES = frozenset("""
T_destination _apply _backward_hooks _backward_pre_hooks _buffers _call_impl _compiled_call_impl
_forward_hooks _forward_hooks_always_called _forward_hooks_with_kwargs _forward_pre_hooks
_forward_pre_hooks_with_kwargs _get_backward_hooks _get_backward_pre_hooks _get_name _is_full_backward_hook
_load_from_state_dict _load_state_dict_post_hooks _load_state_dict_pre_hooks _maybe_warn_non_full_backward_hook
_modules _named_members _non_persistent_buffers_set _parameters _register_load_state_dict_pre_hook
_register_state_dict_hook _replicate_for_data_parallel _save_to_state_dict _slow_forward _state_dict_hooks
_state_dict_pre_hooks _version _wrapped_call_impl add_module apply bfloat16 buffers call_super_init children
compile cpu cuda double dump_patches eval extra_repr float forward get_buffer get_extra_state get_parameter
get_submodule half ipu load_state_dict modules mtia named_buffers named_children named_modules
named_parameters parameters register_backward_hook register_buffer register_forward_hook
register_forward_pre_hook register_full_backward_hook register_full_backward_pre_hook
register_load_state_dict_post_hook register_load_state_dict_pre_hook register_module register_parameter
register_state_dict_post_hook register_state_dict_pre_hook requires_grad_ set_extra_state set_submodule
share_memory state_dict to to_empty train training type xpu zero_grad
""".split())


def has_attribute(run, owner, name: str):
    """BoolFact(True/False) for `hasattr(owner, name)`, or None when the run cannot tell. `owner` is
    an object the run built or a class of the tree (`hasattr(experts_class, "_apply_gate")` in a
    class decorator)."""
    if type(owner) is ClassRef:
        if name in _EVERY_CLASS_HAS:
            return BoolFact(True)
        return _class_has(run, owner.source, owner.node.name.value, name)
    if type(owner) is ModuleRef:  # a name the module defines, imports or binds, or a submodule
        return BoolFact(True) if module_bindings.module_attribute(run, owner, name) is not None else None
    if type(owner) is not SelfFact:
        return None
    if name in owner.attributes:
        return None if Pair((owner, name)) in run.maybe_attributes else BoolFact(True)
    instance = run.instances.get(id(owner))
    if instance is None:
        return None
    if owner in run.sub_config_objects:
        # a sub-config read from config.json holds what its `to_dict()` wrote, as the config does
        # (library_values.config_has): a name neither there nor bound by its class is absent
        return BoolFact(any(_class_defines(node, name) for _, node in _chain(run, instance.source, instance.class_name)))
    verdict = _class_has(run, instance.source, instance.class_name, name)
    if verdict is not None and not verdict.value and owner in run.incomplete_objects:
        return None
    return verdict


def holds_every_attribute(run, owner) -> bool:
    """Whether the run saw every attribute `owner`'s `__dict__` can hold (the conditions above, for
    any name): a name it does not hold is certainly not in its `__dict__`."""
    instance = run.instances.get(id(owner)) if type(owner) is SelfFact else None
    if instance is None or owner in run.incomplete_objects:
        return False
    if owner in run.sub_config_objects:
        return True  # what its config.json dict holds
    return _class_has(run, instance.source, instance.class_name, "\0") == BoolFact(False)


def _class_has(run, source, class_name: str, name: str):
    """True when a class of the chain defines `name` or a decorator wrote it on one; False when the
    chain is all in the tree down to nn.Module and none does; else None."""
    chain = _chain(run, source, class_name)
    if not chain or chain[0][0] is not source or chain[0][1].name != class_name:
        return None
    names_in_chain = {node.name for _, node in chain}
    closed, module = True, False
    for home, node in chain:
        if _class_defines(node, name) or name in run.class_patches.get((home.path, node.name), {}):
            return BoolFact(True)
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in names_in_chain:
                continue
            dotted = ast_dotted_name(base)
            resolved = (home.ctx.settings.imports.resolve_text(dotted) if dotted else None) or dotted
            module = module or resolved in _MODULE_BASES and resolved != "object"
            closed = closed and resolved in _MODULE_BASES  # else an outside base, or a torch layer's own
    if module and name in NN_MODULE_ATTRIBUTES:
        return BoolFact(True)
    if not closed or name.startswith("__") and name.endswith("__"):
        return None
    return BoolFact(False)


# nn.Module methods that add attributes (a module, buffer or parameter by name, or whatever `fn` does)
_ADDING_METHODS = frozenset({"add_module", "register_module", "register_buffer", "register_parameter",
                             "set_submodule", "apply", "set_extra_state", "load_state_dict"})

# Python builtins that read what they are given and set no attribute on it
_READING_BUILTINS = frozenset({"type", "isinstance", "issubclass", "id", "len", "repr", "str", "hasattr", "getattr",
                               "callable", "print", "format", "hash", "dir", "bool", "iter", "next", "sorted"})


def unknown_call(interp, func, args, pure) -> None:
    """A call the run does not follow: the objects it is handed may hold attributes the run never sees."""
    run = interp.run
    run.doubt()  # a call not followed may raise anything
    if getattr(func, "value", None) in _READING_BUILTINS and func.value not in interp.env:
        return
    handed = []
    if hasattr(func, "attr") and pure(func.value, interp.env):
        method = func.attr.value
        receiver = interp.eval(func.value)
        if type(receiver) is not SelfFact or not (
                method in NN_MODULE_ATTRIBUTES and method not in _ADDING_METHODS or _holds_value(run, receiver, method)):
            handed.append(receiver)
    handed.extend(interp.eval(node) for node in [*args.positional, *args.keywords.values()] if pure(node, interp.env))
    mark_handed(run, handed)


def mark_handed(run, values) -> None:
    """Objects given to a call the run does not follow (or the items of a list given): their
    attributes may no longer be all the run has seen."""
    for value in values:
        items = getattr(value, "items", None)
        for one in (value, *(items if type(items) is tuple else ())):
            if type(one) is SelfFact:
                run.incomplete_objects.add(one)


def _holds_value(run, owner, name: str) -> bool:
    """`self.config_class(...)` where a class body assigns `config_class = SomeClass`: calling the value
    hands it no `self` (only a function defined in the class is bound)."""
    instance = run.instances.get(id(owner))
    if instance is None or name in owner.attributes:
        return name in owner.attributes
    for _, node in _chain(run, instance.source, instance.class_name):
        if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name for s in node.body):
            return False
        if _class_defines(node, name):
            return True
    return False


def _class_defines(node: ast.ClassDef, name: str) -> bool:
    """A method, property, class attribute or annotated field of that name in the class body."""
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.name == name:
            return True
        targets = statement.targets if isinstance(statement, ast.Assign) else \
            [statement.target] if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) else []
        for target in targets:
            if any(isinstance(t, ast.Name) and t.id == name for t in ast.walk(target)):
                return True
    return False
