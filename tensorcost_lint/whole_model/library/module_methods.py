"""nn.Module's own methods called on a module of the analysed tree that does not define them.

`module.parameters()`, `.buffers()` and the other iterators over what a module registered cost
nothing and run no model code (their items are not enumerated). `module.eval()` and `module.train(mode)` set `training` on the module and every module below it and
return the module (torch 2.x `nn.Module.train`); the run's `self.training` reads that flag where it
was set, and the entry's mode elsewhere. BigBird's `set_attention_type` ends with
`if not self.training: self.self.eval()`. `.to(...)`, `.float()`, `.cpu()` and the like return
the module too (module_casts).
"""

from __future__ import annotations

from ...analysis.facts import SelfFact, StringFact
from ...analysis.interpreter import UNHANDLED
from . import module_casts, module_children
from ..python import call_binding
from ..python.call_binding import UNKNOWN_REST
from ..values.objects import NONE, BoolFact, ModuleList

MAX_MODULES = 100_000  # modules set per call: a bound on a hostile tree of modules
# nn.Module's iterators over what it registered: they run no model code and compute nothing, so the
# call is no module call left unfollowed; which tensors they yield the run does not enumerate
# (`next(self.parameters()).device` reads a device, which stays unknown); the children a module
# registered it does (module_children.py)
_INTROSPECTION = frozenset({"parameters", "buffers", "named_parameters", "named_buffers", "children",
                            "named_children", "modules", "named_modules"})


def call_module_method(interp, receiver, method: str, args):
    run = interp.run
    if type(receiver) is SelfFact and run.instance(receiver) is not None and run.method_of(receiver, method) is not None:
        return UNHANDLED
    children = module_children.children_call(interp, receiver, method, args)  # a module tree walked
    if children is not UNHANDLED:
        return children
    if type(receiver) is not SelfFact or run.instance(receiver) is None:
        return UNHANDLED
    if method in _INTROSPECTION:
        for value in [*args.positional, *args.keywords.values()]:
            interp.eval(value)
        return None
    if method in ("add_module", "register_module"):
        return _add_module(interp, receiver, args)
    if method == "eval" and not args.positional and not args.keywords:
        return _set_training(receiver, False)
    if method == "train" and not args.starred and len(args.positional) + len(args.keywords) <= 1:
        given = args.get(0, "mode")
        mode = interp.eval(given) if given is not None else BoolFact(True)
        if type(mode) is not BoolFact:
            return UNHANDLED
        return _set_training(receiver, mode.value)
    return module_casts.moved_or_cast(interp, receiver, method, args)


def _add_module(interp, receiver: SelfFact, args):
    """`self.add_module(name, module)` (`self.add_module(*stage)` of a known `(name, module)` pair):
    the child registered under its name, as `self.name = module` registers it; a name or pair the
    run cannot read leaves the object with attributes it cannot name."""
    positional, keywords = call_binding.evaluate_arguments(interp, args)
    bound = dict(zip(("name", "module"), positional))
    if UNKNOWN_REST in keywords or len(positional) > 2 or set(keywords) & set(bound):
        bound = {}
    bound.update(keywords)
    name, module = bound.get("name"), bound.get("module")
    if set(bound) == {"name", "module"} and type(name) is StringFact:
        receiver.attributes[name.value] = module
    else:
        interp.run.incomplete_objects.add(receiver)
    return NONE


def _set_training(root: SelfFact, training: bool) -> SelfFact:
    pending, seen = [root], set()
    while pending and len(seen) < MAX_MODULES:
        module = pending.pop()
        if id(module) in seen:
            continue
        seen.add(id(module))
        module.attributes["training"] = BoolFact(training)
        for value in module.attributes.values():
            if type(value) is SelfFact:
                pending.append(value)
            elif type(value) is ModuleList:
                pending.extend(item for item in value.items if type(item) is SelfFact)
    return root
