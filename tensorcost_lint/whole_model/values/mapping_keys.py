"""Keys of the dicts a whole-model run knows (MappingFact): strings, as configuration dicts and
`**kwargs` hold them, and ints, as per-state tables do (`dict.fromkeys(range(n), False)`, `{i: None
for i in range(n)}`, `table[0] = size`). A MappingFact keeps Python's own key (a str or an int), so
`d[0]` and `d["0"]` stay distinct, as in Python.

A bool alone is never a key here (`d[True]` and `d[1]` are one entry to Python: unknown instead);
inside a tuple key it is its int, as Python hashes it. Known floats and tuples of keys are keys, and
a class of the tree is one by its identity, as Python hashes a class (`HANDLERS[type(config)]`)."""

from __future__ import annotations

from shape_annotations import Const

from ...analysis.facts import DimFact, ScalarFact, SequenceFact, StringFact, known_int
from .library_objects import IntFact, MappingFact
from .objects import BoolFact, ClassRef


class ClassKey:
    """A class of the tree as a dict key: equal only to itself (its definition), as Python's classes
    compare and hash by identity."""

    __slots__ = ("ref",)

    def __init__(self, ref: ClassRef) -> None:
        self.ref = ref

    def __eq__(self, other) -> bool:
        return type(other) is ClassKey and other.ref.node is self.ref.node

    def __hash__(self) -> int:
        return id(self.ref.node)


def key_of(run, fact):
    """The Python key a fact is known to be (a str, an int, a known float — `{theta: rope(theta)}`,
    `1.0` and `1` one key as in Python — or a tuple of them: `{(is_sliding, is_loop): Layer}`, where
    a bool is its int, as Python hashes it), or None."""
    if type(fact) is StringFact:
        return fact.value
    if type(fact) in (IntFact, DimFact):
        return known_int(fact, run.sizes if run is not None else {})
    if type(fact) is ScalarFact and run is not None:
        return run.floats.value(fact)
    if type(fact) is SequenceFact:
        keys = tuple(_item_key(run, item) for item in fact.items)
        return None if None in keys else keys
    if type(fact) is ClassRef:
        return ClassKey(fact)
    return None


def _item_key(run, fact):
    """A tuple's item: a bool too (`(False, True)` is `(0, 1)` to a dict, as in Python)."""
    return int(fact.value) if type(fact) is BoolFact else key_of(run, fact)


def key_fact(key, run=None):
    """The fact a known key reads as (`for k in d`, `d.keys()`, `d.items()`)."""
    if isinstance(key, str):
        return StringFact(key)
    if isinstance(key, ClassKey):
        return key.ref
    if isinstance(key, tuple):
        return SequenceFact(tuple(key_fact(item, run) for item in key))
    if isinstance(key, float):
        return run.floats.make(key) if run is not None else ScalarFact()
    return DimFact(Const(key)) if key >= 1 else IntFact(key)


def only_string_keys(mapping: MappingFact) -> bool:
    """Whether `**mapping` is a valid keyword spread (Python refuses any other key)."""
    return all(isinstance(key, str) for key, _ in mapping.items)


def from_keys(run, items, value):
    """`dict.fromkeys(items, value)` of known items: each key bound to the one value (the same
    object for every key, as in Python), a repeated key keeping its first position; None when an
    item is not a known key."""
    keys = None if items is None else [key_of(run, item) for item in items]
    if keys is None or None in keys:
        return None
    return MappingFact(tuple(dict.fromkeys(keys, value).items()))
