"""Builtins that build a container from values the run knows exactly (known_values.py): `list(x)`
and `tuple(x)`, `set`/`frozenset`, `sorted`, `reversed`, `dict(...)`, `dict.fromkeys`,
`collections.OrderedDict` and `itertools.chain`. Configuration code reshapes its layer lists and
kwarg dicts with them before any module is built (`list(reversed(dims))`, `dict(zip(keys, values))`).

Apart from known_builtins.py because these are the builtins that make a new container: each gives
the items Python would, in Python's order, or unknown (None). library/builtin_registry.py names
them."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import DimFact, ScalarFact, SequenceFact, StringFact
from ...analysis.interpreter import UNHANDLED
from . import call_binding, callable_values, known_floats, output_records, python_values
from ..values import mapping_keys
from .known_values import MAX_ITEMS, IteratorFact, int_of, items_of
from ..values.library_objects import IntFact, MappingFact, RecordFact
from ..values.objects import NONE, BoolFact, ModuleList, modules_iterated


NUMBERS = (ScalarFact, DimFact, IntFact, BoolFact)


def sequence_call(interp, args):
    """`list(x)` / `tuple(x)`: a module list stays one; known iterables give their items."""
    if args.keywords or args.starred or len(args.positional) > 1:
        return UNHANDLED
    if not args.positional:
        return SequenceFact(())
    value = modules_iterated(interp.eval(args.positional[0]))
    if type(value) is ModuleList:
        return value
    if type(value) is python_values.GrowingList:
        return python_values.list_value(value)
    if type(value) is RecordFact:
        return output_records.as_sequence(value)
    items = items_of(value)
    return None if items is None else SequenceFact(tuple(items))


def set_call(interp, args):
    """`set(x)` / `frozenset(x)` of known plain items: each distinct item once. Python's iteration
    order of a set is not the code's to rely on; first occurrence is taken, which changes no total
    (a loop over a set costs each item once, in any order)."""
    if args.keywords or args.starred or len(args.positional) > 1:
        return UNHANDLED
    if not args.positional:
        return SequenceFact(())
    return distinct_items(interp, items_of(interp.eval(args.positional[0])))


def distinct_items(interp, items):
    """The items of a set built from `items` (`set(x)`, `{t for t in thetas if t}`): each distinct
    value once, equal as Python compares them (`1 == 1.0`), the first occurrence kept; None when an
    item is not a known string or number."""
    if items is None:
        return None
    kept: dict = {}
    for item in items:
        key = set_key(interp, item)
        if key is None:
            return None
        kept.setdefault(key, item)
    return SequenceFact(tuple(kept.values()))


def set_display(interp, node: cst.Set):
    """`{a, b, *rest}` of known items: each distinct item once (as `set([...])`); None otherwise."""
    items = []
    for element in node.elements:
        if type(element) is cst.StarredElement:
            spliced = items_of(interp.eval(element.value))
            if spliced is None:
                return None
            items.extend(spliced)
        else:
            items.append(interp.eval(element.value))
    return None if len(items) > MAX_ITEMS else distinct_items(interp, items)


def set_key(interp, item):
    """The value a set holds a known string or number as (`1` and `1.0` one), a class by its
    identity (`{m for m in LAYERS.values()}`), or None."""
    if type(item) is StringFact:
        return item.value
    if type(item) in NUMBERS:
        return known_floats.number(interp.run, item)
    return callable_values.identity_key(item)


def _sort_key(interp, item):
    """The value `sorted` orders a known plain item by, or None (a dim of no known size): strings,
    and numbers (ints, sizes, known floats: one kind, as Python compares them)."""
    if type(item) is StringFact:
        return (1, item.value)
    value = known_floats.number(interp.run, item) if type(item) in NUMBERS else None
    return None if value is None else (0, value)


def sorted_call(interp, args):
    """`sorted(x)` / `sorted(x, reverse=True)` of known strings or numbers (one kind, as Python
    requires): the items in order; a `key=` function is not modelled."""
    if args.starred or len(args.positional) != 1 or set(args.keywords) - {"reverse"}:
        return UNHANDLED
    items = items_of(interp.eval(args.positional[0]))
    flag = interp.eval(args.keywords["reverse"]) if "reverse" in args.keywords else BoolFact(False)
    reverse = flag.value if type(flag) is BoolFact else None
    keys = None if items is None else [_sort_key(interp, item) for item in items]
    if keys is None or None in keys or reverse is None or len({kind for kind, _ in keys}) > 1:
        return None
    order = sorted(range(len(items)), key=lambda i: keys[i][1], reverse=reverse)
    return SequenceFact(tuple(items[i] for i in order))


def reversed_call(interp, args):
    """`reversed(x)` of a known sequence or of a module list's listed items."""
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    value = modules_iterated(interp.eval(args.positional[0]))
    if type(value) is ModuleList and value.count is None:
        return ModuleList(tuple(reversed(value.items)))
    if type(value) is ModuleList:
        return value  # one module repeated: the same in either order
    items = _listed(interp, value)
    return None if items is None else IteratorFact(tuple(reversed(items)))


def dict_call(interp, args):
    """`dict()`, `dict(a=1)`, `dict(mapping, a=1)`, `dict([("a", x), ...])` (and OrderedDict, the
    same in insertion order): a known mapping with string keys."""
    positional, keywords = call_binding.evaluate_arguments(interp, args)
    if len(positional) > 1 or args.starred and not all(type(v) is MappingFact for v in positional):
        return None
    base = {}
    if positional:
        pairs = _pairs(positional[0])
        if pairs is None:
            return None
        base.update(pairs)
    base.update(keywords)
    return MappingFact(tuple(base.items()))


def fromkeys(interp, args):
    """`dict.fromkeys(range(n), False)`: a known mapping (mapping_keys)."""
    if args.starred or args.keywords or not 1 <= len(args.positional) <= 2:
        return UNHANDLED
    facts = [interp.eval(value) for value in args.positional]
    return mapping_keys.from_keys(interp.run, items_of(facts[0]), facts[1] if len(facts) == 2 else NONE)


def _pairs(value):
    """The (key, value) pairs of a mapping, or of a known sequence of 2-item sequences with string
    keys; None when any is unknown."""
    if type(value) is MappingFact:
        return list(value.items)
    if type(value) is not SequenceFact:
        return None
    pairs = []
    for item in value.items:
        if type(item) is not SequenceFact or len(item.items) != 2 or type(item.items[0]) is not StringFact:
            return None
        pairs.append((item.items[0].value, item.items[1]))
    return pairs


def chain_call(interp, args):
    """`itertools.chain(a, b, ...)` of known sequences (module lists with listed items too): one
    iterator over all their items in turn."""
    if args.keywords:
        return UNHANDLED
    items = []
    for value in call_binding.evaluate_arguments(interp, args)[0]:
        part = _listed(interp, value)
        if part is None:
            return None
        items.extend(part)
        if len(items) > MAX_ITEMS:
            return None
    return IteratorFact(tuple(items))


def repeat_call(interp, args):
    """`itertools.repeat(x, n)` with a known count: an iterator over x n times (`tuple(repeat(x,
    n))`, a value made an n-tuple); without a count it never ends, so it is unknown."""
    if args.starred or not 1 <= len(args.positional) + len(args.keywords) <= 2:
        return UNHANDLED
    positional, keywords = call_binding.evaluate_arguments(interp, args)
    values = list(positional) + [keywords[key] for key in ("object", "times") if key in keywords]
    if len(values) != 2 or len(values) != len(positional) + len(keywords):
        return None
    count = int_of(interp.run, values[1])
    if count is None or count > MAX_ITEMS:
        return None
    return IteratorFact((values[0],) * max(count, 0))


def _listed(interp, value):
    """The items of a known sequence, or of a module list — one built module repeated a known
    number of times is that module so many times."""
    if type(value) is python_values.GrowingList:
        value = python_values.list_value(value)
    if type(value) is ModuleList:
        if value.count is None:
            return value.items
        count = int_of(interp.run, DimFact(value.count))
        return None if count is None or count > MAX_ITEMS else value.items * count
    return items_of(value)


def module_list(interp, args):
    """`list(zip(...))`, `list(self.blocks)`: the same module list (an nn.Sequential's modules too)."""
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    value = modules_iterated(interp.eval(args.positional[0]))
    if type(value) is ModuleList:
        return value
    return python_values.list_value(value) if type(value) is python_values.GrowingList else None
