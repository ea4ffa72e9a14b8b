"""Keys of the dicts a whole-model run knows (MappingFact): strings, as configuration dicts and
`**kwargs` hold them, and ints, as per-state tables do (`dict.fromkeys(range(n), False)`, `{i: None
for i in range(n)}`, `table[0] = size`). A MappingFact keeps Python's own key (a str or an int), so
`d[0]` and `d["0"]` stay distinct, as in Python.

A bool is never a key here: Python hashes True as 1, so `d[True]` and `d[1]` are one entry, which a
table of facts keyed by kind would not see (unknown instead)."""

from __future__ import annotations

from shape_annotations import Const

from ..analysis.facts import DimFact, StringFact, known_int
from .library_objects import IntFact, MappingFact


def key_of(run, fact):
    """The Python key a fact is known to be (a str or an int), or None."""
    if type(fact) is StringFact:
        return fact.value
    if type(fact) in (IntFact, DimFact):
        return known_int(fact, run.sizes if run is not None else {})
    return None


def key_fact(key):
    """The fact a known key reads as (`for k in d`, `d.keys()`, `d.items()`)."""
    if isinstance(key, str):
        return StringFact(key)
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
