"""`module.named_children()` and `module.children()`: the modules a module registered, in the order
torch keeps them (`_modules`: the order the attributes were first set, `add_module` included; a
container's items under "0", "1", ...). A recursive walk of the module tree written over them
(weight init's `named_apply(fn, module)`, a `named_modules` generator) then runs as Python runs it:
one call per module, as deep as the tree, over a structure the run built and knows whole.

The children are known only when every attribute of the module is known to be a module or not to be
one: a module object of the tree, a torch layer or container, a module either side of an undecided
condition builds, or a plain value (a list of data grown by appends included); a value the run does
not know, an object of a class outside the tree, a module a limit cut short or a list whose items
repeat a count the run does not know leaves them unknown (None)."""

from __future__ import annotations

from ...analysis.facts import DimFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, StringFact, TensorFact
from ...analysis.interpreter import UNHANDLED
from ..python.known_values import IteratorFact, appended_data
from ..python.python_values import GrowingList, ModuleChoice, Partial
from ..values.library_objects import IntFact, MappingFact
from ..values.library_layers import EinopsLayer
from ..values.inheritance import module_root, plain_class, torch_base
from ..values.objects import NONE, BoolFact, ClassRef, Embedding, FunctionRef, ModuleDict, ModuleList, Sequential, \
    known_count

MAX_CHILDREN = 4096  # children listed per call: a bound on a hostile module


def named_children(run, module):
    """The (name, child) pairs `module.named_children()` yields, as a tuple of 2-tuples; None when
    not known."""
    kind = type(module)
    if kind in (ModuleFact, Embedding, EinopsLayer):
        return ()  # a torch layer (Linear, Conv2d, a norm, an activation) registers no module
    if kind in (ModuleList, Sequential):
        return _items(run, module)
    if kind is ModuleDict:
        return tuple((name, child) for name, child in module.items) if all(
            _is_module(run, child) is True for _, child in module.items) else None
    if kind is ModuleChoice:  # `DropPath(p) if p > 0. else nn.Identity()` undecided: what every side registers
        sides = [named_children(run, side) for side in module.sides]
        same = all(side is not None and [(n, id(c)) for n, c in side] == [(n, id(c)) for n, c in sides[0]]
                   for side in sides)
        return sides[0] if same else None
    if kind is not SelfFact:
        return None
    instance = run.instance(module)
    if instance is None or module in run.incomplete_objects:
        return None
    if plain_class(run, instance.source, instance.cls):
        return None  # not a module: it has no named_children
    children: list = []
    if not module_root(run, instance.source, instance.cls):
        contents = instance.contents
        base = torch_base(run, instance.source, instance.cls)
        # `class Block(nn.ModuleDict)` built empty: its children are what it registered
        empty_dict = base in _DICT_BASES and contents is None
        if not empty_dict and (base is None or type(contents) not in (ModuleList, Sequential, ModuleFact, Embedding)):
            return None  # a base outside the tree and torch: what it registers is not known
        if type(contents) in (ModuleList, Sequential):  # its items first (a Sequential's hold the later ones too)
            listed = _items(run, contents)
            if listed is None:
                return None
            children.extend(listed)
    seen = {id(child) for _, child in children}
    for name, value in module.attributes.items():
        registered = _is_module(run, value)
        if registered is None:
            return None
        if registered and id(value) not in seen:
            children.append((name, value))
    return tuple(children) if len(children) <= MAX_CHILDREN else None


def children_call(interp, receiver, method: str, args):
    """`module.named_children()` / `module.children()`, and `self.items()` / `values()` / `keys()` in
    a subclass of nn.ModuleDict (what it registered, by name: torchvision's and timm's dense
    blocks): an iterator over the known children; None when they are not known; UNHANDLED for
    another call (nothing evaluated)."""
    if args.positional or args.keywords or args.starred:
        return UNHANDLED
    if method not in ("named_children", "children") and not (method in _DICT_VIEWS and _dict_subclass(interp.run, receiver)):
        return UNHANDLED
    pairs = named_children(interp.run, receiver)
    if pairs is None:
        return None
    if method in ("named_children", "items"):
        return IteratorFact(tuple(SequenceFact((StringFact(name), child)) for name, child in pairs))
    if method == "keys":
        return IteratorFact(tuple(StringFact(name) for name, _ in pairs))
    return IteratorFact(tuple(child for _, child in pairs))


_DICT_BASES = frozenset({"torch.nn.ModuleDict", "torch.nn.modules.container.ModuleDict"})
_DICT_VIEWS = frozenset({"items", "values", "keys"})


def _dict_subclass(run, receiver) -> bool:
    instance = run.instance(receiver) if type(receiver) is SelfFact else None
    return instance is not None and torch_base(run, instance.source, instance.cls) in _DICT_BASES


def _items(run, container):
    items = container.items
    if container.count is not None:
        count = known_count(container.count, run.sizes)
        if count is None or count > MAX_CHILDREN:
            return None
        items = items * count
    names = getattr(container, "names", None) or tuple(str(i) for i in range(len(items)))
    if not all(_is_module(run, item) is True for item in items):
        return None
    return tuple(zip(names, items))


def _is_module(run, value):
    """True for a module value, False for a plain value, None when it cannot be told."""
    kind = type(value)
    if kind in (ModuleFact, Embedding, EinopsLayer, ModuleList, Sequential, ModuleDict):
        return True
    if kind is ModuleChoice:  # one module or another: a module either way
        return True if all(_is_module(run, side) is True for side in value.sides) else None
    if kind is GrowingList:  # `self.stages = []` or `nn.ModuleList()` grown by appends: data is no module
        return False if appended_data(value) is not None else None
    if kind is SelfFact:
        instance = run.instance(value)
        if instance is None:
            return None
        if plain_class(run, instance.source, instance.cls):
            return False
        return True if module_root(run, instance.source, instance.cls) or torch_base(
            run, instance.source, instance.cls) is not None else None
    # a tensor (a parameter or buffer), a number, a string, a tuple or dict, a function or class: no
    # module torch registers (a tuple of modules is not one)
    return False if value is NONE or kind in _PLAIN else None


_PLAIN = (DimFact, ScalarFact, TensorFact, IntFact, BoolFact, StringFact, SequenceFact, MappingFact, ClassRef,
          FunctionRef, Partial)
