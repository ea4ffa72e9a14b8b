"""Methods called on plain values the run knows exactly (known_values.py): dict methods
(`kwargs.get('dim_head', 64)`, `kwargs.pop('k')`, `d.update(...)`, `d.setdefault(k, v)`, `d.items()`), string tests
(`key.startswith(prefix)`), list methods (`seq.pop(0)`, `outs.append(x)`, `is_full.index(True)`) and
set methods (`names.update(overrides)`, `names.discard("skip")`, `names.add(x)`).

Kept apart from the values themselves because a method is where a value may change in place: each
one here either computes what Python would and rebinds the changed receiver (container_changes.py),
or makes the receiver unknown — a method it does not follow never leaves a stale value behind."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import SequenceFact, StringFact
from ...analysis.interpreter import UNHANDLED
from .container_changes import forget, rebind
from .known_containers import distinct_items, set_key
from .known_values import MAX_ITEMS, int_fact, int_of, items_of, partly_unknown
from ..values.library_objects import IntFact, MappingFact
from ..values.mapping_keys import key_fact, key_of
from ..values.objects import NONE, BoolFact


# -- methods of known values ----------------------------------------------------------------------------

def method_call(interp, func: cst.Attribute, receiver, args):
    """`d.get(k, default)`, `d.items()`, `s.startswith(p)`, `seq.pop(0)`…; UNHANDLED otherwise.
    A method that changes its receiver rebinds the name it was read from (the value is a new
    fact); through any other expression it is unknown."""
    name = func.attr.value
    if type(receiver) is MappingFact:
        return _mapping_method(interp, func, receiver, name, args)
    if type(receiver) is StringFact and name in _STRING_METHODS and not args.keywords and not args.starred:
        return _string_method(interp, receiver, name, args)
    if type(receiver) is SequenceFact:
        return _sequence_method(interp, func, receiver, name, args)
    return UNHANDLED


# str methods computed as Python does when every argument is a known string (a model type's module
# name: `key.replace("-", "_")`, a name's tag `name.split(".", 1)`, a source prefix
# `name.partition(":")`): (fewest, most) positional arguments; the result of a test is a bool, a
# count or position an int, a split a list of strings, a partition a tuple of three
_STRING_METHODS = {"startswith": (1, 1), "endswith": (1, 1), "replace": (2, 2), "lower": (0, 0), "upper": (0, 0),
                   "strip": (0, 1), "lstrip": (0, 1), "rstrip": (0, 1), "removeprefix": (1, 1),
                   "removesuffix": (1, 1), "capitalize": (0, 0), "title": (0, 0), "partition": (1, 1),
                   "rpartition": (1, 1), "split": (0, 2), "rsplit": (0, 2), "join": (1, 1), "count": (1, 1),
                   "find": (1, 1), "rfind": (1, 1), "isdigit": (0, 0), "isalnum": (0, 0), "isalpha": (0, 0),
                   "isidentifier": (0, 0), "zfill": (1, 1)}


# the str methods whose result is a string again: `name.replace('_', '').lower()` chains them
STRING_RESULTS = frozenset({"replace", "lower", "upper", "strip", "lstrip", "rstrip", "removeprefix", "removesuffix",
                            "capitalize", "title", "join", "zfill"})


def string_chain(interp, node, pure) -> bool:
    """Whether `node` is a chain of string-returning str methods on a plain expression (`pure`
    says which) whose value is a known string: its calls may then be evaluated one by one."""
    while type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in STRING_RESULTS:
        node = node.func.value
    return pure(node) and type(interp.eval(node)) is StringFact


def _string_method(interp, receiver: StringFact, name: str, args):
    values = [interp.eval(value) for value in args.positional]
    fewest, most = _STRING_METHODS[name]
    if not fewest <= len(values) <= most:
        return None
    if name == "join":  # `".".join(parts)`: every item a known string
        parts = items_of(values[0])
        if parts is None or any(type(part) is not StringFact for part in parts):
            return None
        return StringFact(receiver.value.join(part.value for part in parts))
    plain = []
    for position, value in enumerate(values):
        if type(value) is StringFact:
            plain.append(value.value)
        elif position == 0 and value is NONE and name in ("split", "rsplit", "strip", "lstrip", "rstrip"):
            plain.append(None)  # `s.split(None, 1)`: whitespace
        elif position == 1 and name in ("split", "rsplit", "zfill") or position == 0 and name == "zfill":
            number = int_of(interp.run, value)
            if number is None:
                return None
            plain.append(number)
        else:
            return None
    try:
        result = getattr(receiver.value, name)(*plain)
    except (TypeError, ValueError):  # `s.split("")`: Python raises; nothing is claimed
        return None
    if type(result) is bool:
        return BoolFact(result)
    if type(result) is int:
        return int_fact(result)
    if type(result) in (tuple, list):
        return None if len(result) > MAX_ITEMS else SequenceFact(tuple(StringFact(part) for part in result))
    return StringFact(result)


# Methods that change a list or dict in place: any not followed exactly makes the value unknown.
_MUTATORS = frozenset({"append", "extend", "insert", "remove", "clear", "sort", "reverse", "pop", "popitem",
                       "setdefault", "update", "__setitem__", "__delitem__"})


def _sequence_method(interp, func, sequence: SequenceFact, name: str, args):
    if args.keywords or args.starred:
        return _unknown_change(interp, func, name, args)
    if name == "copy" and not args.positional:
        return sequence
    if name == "index" and len(args.positional) == 1:  # `is_full.index(True)` of known plain items
        value = interp.eval(args.positional[0])
        if _plain(value) and all(_plain(item) for item in sequence.items):
            values = [plain_value(item) for item in sequence.items]
            return int_fact(values.index(plain_value(value))) if plain_value(value) in values else None
        return None
    if name == "pop" and len(args.positional) <= 1:
        index = int_of(interp.run, interp.eval(args.positional[0])) if args.positional else -1
        if index is None or not -len(sequence.items) <= index < len(sequence.items):
            forget(interp, func.value)
            return None
        items = list(sequence.items)
        item = items.pop(index)
        rebind(interp, func.value, SequenceFact(tuple(items), kind=sequence.kind))  # a list stays a list
        return item
    if name in _SET_CHANGES and len(args.positional) == 1:
        return _set_change(interp, func, sequence, name, interp.eval(args.positional[0]))
    if name in ("append", "extend") and len(args.positional) == 1:
        value = interp.eval(args.positional[0])
        added = (value,) if name == "append" else items_of(value)
        if added is None:
            forget(interp, func.value)
        else:
            added = tuple(added)
            if len(sequence.items) + len(added) > MAX_ITEMS:  # `hs.extend(hs)` line after line: 2**n items
                forget(interp, func.value)
            else:
                rebind(interp, func.value, SequenceFact(sequence.items + added, kind=sequence.kind))
        return NONE
    return _unknown_change(interp, func, name, args)


# methods only a set has (a list has none of them): the receiver is a set, its items distinct
_SET_CHANGES = frozenset({"add", "update", "discard"})


def _set_change(interp, func, items: SequenceFact, name: str, value):
    """`s.add(x)`, `s.update(values)` (a dict gives its keys), `s.discard(x)` on a known set: the set
    rebound with each distinct item once (the first kept, as set_call keeps it)."""
    added = (value,) if name != "update" else items_of(value)
    merged = None if added is None else distinct_items(interp, items.items + tuple(added))
    if merged is not None and name == "discard":
        gone = set_key(interp, value)
        merged = SequenceFact(tuple(item for item in merged.items if set_key(interp, item) != gone))
    if merged is None or len(merged.items) > MAX_ITEMS:
        forget(interp, func.value)
    else:
        rebind(interp, func.value, merged)
    return NONE


def _plain(value) -> bool:
    """A value whose equality the facts decide: a bool, a small int, a string, None."""
    return value is NONE or type(value) in (BoolFact, IntFact, StringFact)


def plain_value(value):
    """The Python value of a plain fact (`_plain`), compared as Python compares (False == 0)."""
    return None if value is NONE else value.value


def _unknown_change(interp, func, name: str, args):
    """A method the run does not follow: when it may change the receiver, the receiver is unknown
    from here on (its arguments are evaluated for their sites)."""
    if name not in _MUTATORS:
        return UNHANDLED
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)
    forget(interp, func.value)
    return None


def _mapping_method(interp, func, mapping: MappingFact, name: str, args):
    if args.starred or args.keywords and (name != "update" or args.positional):
        return _unknown_change(interp, func, name, args)
    positional = [interp.eval(value) for value in args.positional]
    if name == "update" and len(positional) <= 1:
        keywords = {key: interp.eval(value) for key, value in args.keywords.items()}
        base = positional[0] if positional else MappingFact(())
        if type(base) is not MappingFact:
            forget(interp, func.value)
            return None
        rebind(interp, func.value, MappingFact(tuple({**dict(mapping.items), **dict(base.items), **keywords}.items())))
        return NONE
    if name in ("keys", "values", "items", "copy") and not positional:
        if name == "copy":
            return mapping
        if partly_unknown(mapping):
            return None
        if name == "keys":
            return SequenceFact(tuple(key_fact(key) for key, _ in mapping.items))
        if name == "values":
            return SequenceFact(tuple(value for _, value in mapping.items))
        return SequenceFact(tuple(SequenceFact((key_fact(key), value)) for key, value in mapping.items))
    if name in ("get", "pop") and 1 <= len(positional) <= 2:
        key = key_of(interp.run, positional[0])
        if key is None:
            if name == "pop":
                forget(interp, func.value)
            return None
        default = positional[1] if len(positional) == 2 else NONE
        present = dict(mapping.items)
        if key not in present:
            if partly_unknown(mapping):
                return None  # the unknown rest may hold it
            return default if name == "get" or len(positional) == 2 else None
        if name == "pop":
            rebind(interp, func.value, MappingFact(tuple((k, v) for k, v in mapping.items if k != key)))
        return present[key]
    if name == "setdefault" and 1 <= len(positional) <= 2:
        return _setdefault(interp, func, mapping, positional)
    if name in _MUTATORS:
        forget(interp, func.value)
        return None
    return UNHANDLED


def _setdefault(interp, func, mapping: MappingFact, positional):
    """`d.setdefault(k, v)`: the value held for k, the dict unchanged (`params[kind].setdefault("rope_type",
    "default")` where the key is there); else v, inserted."""
    key = key_of(interp.run, positional[0])
    present = dict(mapping.items)
    if key is not None and key in present:
        return present[key]
    if key is None or partly_unknown(mapping):
        forget(interp, func.value)
        return None
    value = positional[1] if len(positional) == 2 else NONE
    rebind(interp, func.value, MappingFact(mapping.items + ((key, value),)))
    return value
