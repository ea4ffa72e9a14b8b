"""A torch container changed in place after it was built: `features.add_module("block1", block)` on
an `nn.Sequential`, `layers.append(layer)`, `.extend(more)`, `.insert(0, stem)` on an
`nn.ModuleList`. The container the name (or `self.` attribute) holds is the changed one, as in torch
(`add_module` of a name it holds replaces that child in place); a change the run cannot follow
exactly (an item or name it does not know, a list of a count it cannot tell, `pop`, `del`,
`update`) makes the container unknown from there on, so a call of it is listed as not followed —
never a container that silently lacks what was added."""

from __future__ import annotations

from ...analysis.facts import StringFact
from ...analysis.interpreter import UNHANDLED
from ..python import call_binding, known_values, python_values
from ..python.container_changes import forget, rebind
from ..values.objects import NONE, ModuleDict, ModuleList, Sequential, known_count

# methods of nn.Sequential / nn.ModuleList / nn.ModuleDict that change the container
_CHANGES = frozenset({"add_module", "register_module", "append", "extend", "insert", "pop", "__setitem__",
                      "__delitem__", "update", "clear"})
MAX_ITEMS = known_values.MAX_ITEMS


def change(interp, node, container, method: str, args):
    """The change `container.method(args)` makes, the container rebound where `node` reads it;
    UNHANDLED for a method that changes nothing (nothing evaluated)."""
    if method not in _CHANGES:
        return UNHANDLED
    positional, keywords = call_binding.evaluate_arguments(interp, args)
    items = _listed(interp, container)
    changed = None
    if items is not None and type(container) is not ModuleDict and not keywords:
        changed = _changed(container, items, method, positional)
    if changed is None:
        forget(interp, node)
        return None
    rebind(interp, node, changed)
    return NONE if method in ("add_module", "register_module") else changed


def _listed(interp, container):
    """(names, items) of the container's children, each listed; None when not known."""
    if type(container) is ModuleDict:
        return None
    items = container.items
    if container.count is not None:
        count = known_count(container.count, interp.run.sizes)
        if count is None or count * len(items) > MAX_ITEMS:
            return None
        items = items * count
    names = getattr(container, "names", None) or tuple(str(i) for i in range(len(items)))
    return list(names), list(items)


def _changed(container, listed, method: str, positional):
    names, items = listed
    if method in ("add_module", "register_module") and len(positional) == 2 and type(positional[0]) is StringFact:
        name, module = positional[0].value, positional[1]
        if not python_values.is_module_value(module):
            return None
        if name in names:
            items[names.index(name)] = module
        else:
            names.append(name)
            items.append(module)
    elif method == "append" and len(positional) == 1 and python_values.is_module_value(positional[0]):
        names.append(str(len(items)))
        items.append(positional[0])
    elif method == "extend" and len(positional) == 1:
        added = known_values.items_of(positional[0])
        if added is None or not all(python_values.is_module_value(item) for item in added):
            return None
        for item in added:
            names.append(str(len(items)))
            items.append(item)
    else:
        return None  # `insert`, `pop`, `del`, `update`, ...: not followed
    if type(container) is ModuleList:
        if any(name != str(i) for i, name in enumerate(names)):
            return None
        return ModuleList(tuple(items))
    plain = all(name == str(i) for i, name in enumerate(names))
    return Sequential(tuple(items), None, None if plain else tuple(names))
