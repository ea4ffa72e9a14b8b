"""Known lists and dicts changed in place: `kwargs['k'] = v`, `groups[i][key] = v`, `del kwargs['k']`,
and a method that changes its receiver (known_methods.py). The changed value is rebound to the name
or `self` attribute it was read through; a change the run cannot follow exactly — an unknown key, a
change repeated by a loop read once for many iterations — makes it unknown from there on.

Apart from known_values.py, which computes values and never changes one: every in-place change to a
known list or dict, and every forgetting of one, goes through `rebind` and `forget` here."""

from __future__ import annotations

import libcst as cst

from shape_annotations import Const

from ...analysis.facts import SelfFact, SequenceFact, TensorFact
from .known_values import int_of, side_effect_free
from ..values.library_objects import MappingFact
from ..values.mapping_keys import key_of


def exact_here(run) -> bool:
    """Whether a change made now happens once per run of the code around it: not inside a loop the
    run reads once for many iterations (`for block in self.h` over n blocks)."""
    return all(count == Const(1) for count in run.loop_counts)


def rebind(interp, node, value) -> None:
    """The receiver `name` now holds `value`: a list or dict changed in place, read through the
    name it was bound to; anything else (or a change repeated uncounted) makes it unknown."""
    if isinstance(node, cst.Name) and exact_here(interp.run):
        interp.env[node.value] = value
    elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
            and type(interp.env.get(node.value.value)) is SelfFact and _changed_once(interp, interp.env[node.value.value]):
        interp.env[node.value.value].attributes[node.attr.value] = value
    elif not (isinstance(node, cst.Subscript) and store_item(interp, node, value)):
        forget(interp, node)  # (`params[kind].setdefault(k, v)`: the dict it was read from holds the changed one)


def _changed_once(interp, owner) -> bool:
    """A change to an object's dict or list counts once: not in a loop read once for many
    iterations, or there only in the object of one execution (a cache's per-layer state, picked by
    the layer's index: loop_indices)."""
    run = interp.run
    return exact_here(run) or run.loop_indices.changed_once_each(owner, run.loop_counts)


def forget(interp, node) -> None:
    """The receiver changed in a way not followed: what it held is unknown from here on."""
    if isinstance(node, cst.Subscript):
        node = node.value
    if isinstance(node, cst.Name):
        interp.env[node.value] = None
    elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        owner = interp.env.get(node.value.value)
        if type(owner) is SelfFact:
            owner.attributes[node.attr.value] = None


def store_item(interp, target: cst.Subscript, value) -> bool:
    """`kwargs['k'] = v`, `items[i] = v`, `groups[i][key] = v` on known dicts and lists reached from a
    name: the name rebound to the changed value; unknown (the name forgotten) when a key or index is
    not known. False when no known dict or list is reached (the per-file reading applies)."""
    root = target
    while isinstance(root, cst.Subscript):
        root = root.value
    if not _holds_container(interp, root):
        return False
    if target.value is not root and side_effect_free(target.value) and type(interp.eval(target.value)) is TensorFact:
        return False  # `state[1][:, :, i] = h` writes into the tensor the list holds: the list keeps its items
    changed = _stored(interp, target, value, root)
    if changed is None:
        for element in target.slice:
            interp.walk(element)  # the sites in the index
        forget(interp, root)
    else:
        rebind(interp, root, changed)
    return True


def _holds_container(interp, node) -> bool:
    """A name, or an attribute of `self` (`self.rope_type[kind] = ...`), bound to a known dict or list."""
    if isinstance(node, cst.Name):
        return type(interp.env.get(node.value)) in (MappingFact, SequenceFact)
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        owner = interp.env.get(node.value.value)
        return type(owner) is SelfFact and type(owner.attributes.get(node.attr.value)) in (MappingFact, SequenceFact)
    return False


def _stored(interp, target, value, root):
    """The value of the container at `root` after `target = value`, or None."""
    if target is root:
        return value
    elements = list(target.slice) if isinstance(target, cst.Subscript) else []
    part = elements[0].slice if len(elements) == 1 else None
    if not isinstance(part, cst.Index) or not side_effect_free(part.value) or not side_effect_free(target.value):
        return None
    container, key = interp.eval(target.value), interp.eval(part.value)
    if type(container) is MappingFact and key_of(interp.run, key) is not None:
        return _stored(interp, target.value,
                       MappingFact(tuple({**dict(container.items), key_of(interp.run, key): value}.items())), root)
    index = int_of(interp.run, key) if type(container) is SequenceFact else None
    if index is not None and -len(container.items) <= index < len(container.items):
        items = list(container.items)
        items[index] = value
        return _stored(interp, target.value, SequenceFact(tuple(items)), root)
    return None


def forget_deleted(interp, target) -> None:
    """`del kwargs['k']`: the dict or list is unknown from here on."""
    root = target
    while isinstance(root, (cst.Subscript, cst.Attribute)):
        root = root.value
    if isinstance(target, cst.Subscript) and isinstance(root, cst.Name) and \
            type(interp.env.get(root.value)) in (MappingFact, SequenceFact):
        forget(interp, root)
