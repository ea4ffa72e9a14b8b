"""Builtins over values the run knows exactly (known_values.py): `range`, `zip` (also
`zip(*lists)`), `enumerate`, `iter`/`next`, `callable`, `filter` and `map` (calling the function: a
function, a partial or an object with its own `__call__`), `any`/`all`, `len`, `int(flag)`,
`max`/`min`, `setattr`, `bool`, `type`. The registry (library/builtin_registry.py) names each
builtin once, with its readings in order; the builtins that build containers (`list`, `dict`,
`sorted`, ...) are in known_containers.py, and `functools.partial` and calls of what a call returns
(`maybe(self.norm)(q)`) in known_calls.py.

A handler that evaluates its arguments always answers (a value or None), so nothing is evaluated
twice; UNHANDLED (arguments untouched, or only names read) leaves the call to the readings after."""

from __future__ import annotations

import libcst as cst

from shape_annotations import BinOp, Const, simplify_dim

from ...analysis.facts import CONFIG, DimFact, ScalarFact, SelfFact, SequenceFact, StringFact, TensorFact
from ...analysis.interpreter import UNHANDLED
from . import call_binding, class_members, config_objects, known_floats, python_values
from .container_changes import exact_here
from .known_calls import call_with_facts, callable_value
from .known_containers import NUMBERS
from .known_values import (
    MAX_ITEMS, IteratorFact, index_pairs, int_fact, int_of, is_plain, items_of, partly_unknown, side_effect_free
)
from ..values.library_objects import IntFact, MappingFact
from ..values.objects import NONE, BoolFact, ClassRef, ModuleList, modules_iterated


def shadowed(interp, name: str) -> bool:
    """Whether the code rebinds a builtin's name (a local, a definition or an import of it)."""
    return name in interp.env or name in interp.source.definitions or name in interp.source.from_imports


def range_call(interp, args):
    """`range(n)` as a value (`tuple(range(len(layer_types)))`); a loop or comprehension over
    `range(n)` keeps its repeat reading (see `is_range_call`)."""
    if args.keywords or args.starred or not 1 <= len(args.positional) <= 3:
        return UNHANDLED
    values = [int_of(interp.run, interp.eval(value)) for value in args.positional]
    if None in values:
        return None
    bounds = range(*values)
    if len(bounds) > MAX_ITEMS:
        return None
    return SequenceFact(tuple(int_fact(i) for i in bounds))


def _evaluated(interp, args):
    return call_binding.evaluate_arguments(interp, args)


def zip_call(interp, args):
    """`zip(a, b)` and `zip(*lists)` over known sequences: the tuples Python makes. Module lists
    repeated by a count keep the reading of python_values.zipped."""
    if args.keywords or not args.positional:
        return UNHANDLED
    if not all(is_plain(value) for value in args.positional):
        return UNHANDLED  # python_values.zipped reads it (each argument evaluated once there)
    positional, _ = _evaluated(interp, args)
    lists = [items_of(value) for value in positional]
    if any(items is None for items in lists) or any(type(v) is ModuleList for v in positional) and not args.starred:
        return UNHANDLED  # `zip(self.layers, self.norms)`: python_values.zipped (names: read again safely)
    return SequenceFact(tuple(SequenceFact(group) for group in zip(*lists)))


def enumerate_call(interp, args):
    if args.starred or len(args.positional) not in (1, 2) or args.keywords:
        return UNHANDLED
    if is_plain(args.positional[0]):
        value = interp.eval(args.positional[0])
        if type(value) is ModuleList or type(value) is python_values.GrowingList:
            return UNHANDLED  # python_values.enumerated reads module lists
    else:
        value = interp.eval(args.positional[0])
    start = int_of(interp.run, interp.eval(args.positional[1])) if len(args.positional) == 2 else 0
    items = items_of(value)
    if items is None or start is None:
        return None
    return SequenceFact(index_pairs(items, start))


def iter_call(interp, args):
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    value = interp.eval(args.positional[0])
    if type(value) is IteratorFact:
        return value
    items = items_of(value)
    return None if items is None else IteratorFact(tuple(items))


def next_call(interp, args):
    """`next(it, default)`: the iterator's next item, or the default once it is exhausted."""
    if args.keywords or args.starred or len(args.positional) not in (1, 2):
        return UNHANDLED
    iterator = interp.eval(args.positional[0])
    default = interp.eval(args.positional[1]) if len(args.positional) == 2 else None
    if type(iterator) is not IteratorFact or iterator.unknown:
        return None
    if not exact_here(interp.run):
        iterator.unknown = True  # advanced once per iteration of a loop read once: its place is lost
        return None
    if iterator.position < len(iterator.items):
        iterator.position += 1
        return iterator.items[iterator.position - 1]
    return default


def setattr_call(interp, args):
    """`setattr(self, f"{kind}_inv_freq", buffer)` with a known name: the attribute, as `self.x = v`."""
    if args.keywords or args.starred or len(args.positional) != 3:
        return UNHANDLED
    owner, name, value = (interp.eval(node) for node in args.positional)
    instance = interp.run.instance(owner) if type(owner) is SelfFact and type(name) is StringFact else None
    setter = class_members.property_setter(interp.run, instance, name.value) if instance is not None else None
    if setter is not None:  # a property with a setter: the setter runs, as for `obj.name = value`
        interp.run._invoke(setter, [value], {}, None)
    elif owner is CONFIG and type(name) is StringFact:
        config_objects.assign_attribute(interp.run, name.value, value)
    elif type(owner) is SelfFact and type(name) is StringFact:
        owner.attributes[name.value] = value
    elif type(owner) is SelfFact:
        interp.run.incomplete_objects.add(owner)  # an attribute the run cannot name: hasattr cannot tell
    return NONE


def callable_call(interp, args):
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    decided = callable_value(interp.run, interp.eval(args.positional[0]))
    return None if decided is None else BoolFact(decided)


def filter_call(interp, args):
    """`filter(f, seq)` over a known sequence: the items whose `f(item)` is known true."""
    if args.keywords or args.starred or len(args.positional) != 2:
        return UNHANDLED
    function, sequence = (interp.eval(value) for value in args.positional)
    items = items_of(sequence)
    if items is None:
        return None
    kept = []
    for item in items:
        result = item if function is NONE else call_with_facts(interp, args.positional[0], function, [item])
        decided = interp.run.truth(result)
        if decided is None:
            return None
        if decided:
            kept.append(item)
    return SequenceFact(tuple(kept))


def map_call(interp, args):
    """`map(f, seq, ...)` over known sequences with any callable the run holds (a function, a partial
    of one, a module object): `f` called on each item (on the items zipped, stopping at the shortest),
    as the iterator runs when it is consumed; a lambda written in place is lambdas.mapped's."""
    if args.keywords or args.starred or len(args.positional) < 2:
        return UNHANDLED
    function, *sequences = (interp.eval(value) for value in args.positional)
    columns = [items_of(sequence) for sequence in sequences]
    if None in columns or callable_value(interp.run, function) is not True:
        return None
    return SequenceFact(tuple(call_with_facts(interp, args.positional[0], function, list(row))
                              for row in zip(*columns)))


def any_all_call(want_all: bool):
    def handler(interp, args):
        if args.keywords or args.starred or len(args.positional) != 1:
            return UNHANDLED
        items = items_of(interp.eval(args.positional[0]))
        if items is None:
            return None
        truths = [interp.run.truth(item) for item in items]
        if want_all:
            return BoolFact(False) if False in truths else (BoolFact(True) if None not in truths else None)
        return BoolFact(True) if True in truths else (BoolFact(False) if None not in truths else None)
    return handler


def len_call(interp, args):
    """`len(x)` of a string, a tuple, list or dict known item by item, a module list (its count,
    kept symbolic: `len(self.layers)`), a list appended to a known number of times (`masks`), or
    an object whose class defines `__len__` (what it returns); a size, so layer counts stay in the
    dims. Unknown for anything else."""
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    value = modules_iterated(interp.eval(args.positional[0]))
    if type(value) is StringFact:
        return int_fact(len(value.value))
    if type(value) is python_values.GrowingList and not value.unknown:
        total = 0
        for _, count in value.runs:
            times = int_of(interp.run, DimFact(count))
            if times is None:
                return None
            total += times
        return int_fact(total)
    if type(value) is IteratorFact or type(value) is MappingFact and partly_unknown(value):
        return None
    if type(value) in (MappingFact, SequenceFact):
        return DimFact(Const(len(value.items))) if value.items else IntFact(0)
    if type(value) is ModuleList:
        return DimFact(value.count) if value.count is not None else DimFact(Const(len(value.items)))
    method = class_members.dunder(interp.run, value, "__len__")
    if method is not None:  # an object of the tree's classes (a `Sequence` view): its `__len__` runs
        found = interp.run._invoke(method, [], {}, None)
        return found if type(found) in (DimFact, IntFact) else None
    return None


def int_call(interp, args):
    """`int(flag)`, `int(not match)` of a known bool; other ints as before (the argument is free of
    sites, so reading it again there records nothing twice)."""
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    free = side_effect_free(args.positional[0])
    node = args.positional[0]
    if free and type(node) is cst.BinaryOperation and type(node.operator) is cst.Divide:
        return UNHANDLED  # `int(hidden / heads)`: library_builtins.int_of keeps the ratio of dims
    value = interp.eval(node)
    if type(value) is BoolFact:
        return int_fact(int(value.value))
    if type(value) is IntFact:  # `int(options.get('d', 0))`: the int itself
        return value
    if type(value) is StringFact:  # `int(layer_idx)` of a config.json key
        text = value.value.strip()
        return int_fact(int(text)) if text.lstrip("+-").isdigit() and text.isascii() else None
    truncated = known_floats.truncated(interp.run, value)  # `int(head_dim * partial_rotary_factor)`
    if truncated is not None:
        return int_fact(truncated)
    if free:
        return UNHANDLED  # read again by library_builtins.int_of, which keeps a ratio of dims symbolic
    return value if type(value) in (DimFact, IntFact) else ScalarFact()  # evaluated once: this reading answers


def str_call(interp, args):
    """`str(stage)` of a known int, bool or string: its text, as Python writes it."""
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    value = interp.eval(args.positional[0])
    if type(value) is StringFact:
        return value
    if type(value) is BoolFact:
        return StringFact(str(value.value))
    number = int_of(interp.run, value) if type(value) in (IntFact, DimFact) else None
    return StringFact(str(number)) if number is not None else None


def bool_call(interp, args):
    """`bool(x)` of a value whose truth is known (`bool(cond(key))`)."""
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    decided = interp.run.truth(interp.eval(args.positional[0]))
    return None if decided is None else BoolFact(decided)


def extreme_call(pick):
    def handler(interp, args):
        """`max(1, n)` / `min(low, 0)` / `max(widths)` of known numbers: the argument Python picks (the first of
        equal ones), itself, as Python returns it (`min(start + block, seq_len)` is the dim seq_len,
        its formula kept); of numbers not all known, a number of no known value (`x - max(low, 0)`
        keeps x's shape); unknown otherwise."""
        if args.keywords or args.starred or not args.positional:
            return UNHANDLED
        if len(args.positional) == 1:  # `max(widths)`: the largest item of an iterable
            facts = items_of(interp.eval(args.positional[0]))
            if not facts:
                return None  # unknown items, or none (Python raises)
        else:
            facts = [interp.eval(value) for value in args.positional]
        values = [known_floats.number(interp.run, fact) for fact in facts]
        if None in values:
            return ScalarFact() if all(type(fact) in NUMBERS for fact in facts) else None
        chosen = values.index(pick(values))
        return facts[chosen]
    return handler


def sum_call(interp, args):
    """`sum(depths)` / `sum(sizes, start)` of known numbers: Python's total (an int a size or an
    IntFact, a float a known float); sizes not all known add up to their formula (`sum(depths)` of
    config dims); numbers of no known value to a number of no known value; anything else unknown."""
    if args.starred or not 1 <= len(args.positional) <= 2 or set(args.keywords) - {"start"}:
        return UNHANDLED
    facts = items_of(interp.eval(args.positional[0]))
    start = [interp.eval(value) for value in (*args.positional[1:], *args.keywords.values())]
    if facts is None:
        return None
    facts = list(start or [IntFact(0)]) + list(facts)
    values = [known_floats.number(interp.run, fact) for fact in facts]
    if None not in values and all(type(value) in (int, float) for value in values):
        total = sum(values)
        return int_fact(total) if type(total) is int else interp.run.floats.make(total)
    if all(type(fact) in (DimFact, IntFact) for fact in facts):
        dims = [fact.dim for fact in facts if type(fact) is DimFact]
        constant = sum(fact.value for fact in facts if type(fact) is IntFact)
        formula = dims[0]
        for dim in dims[1:] + ([Const(constant)] if constant else []):
            formula = BinOp("+", formula, dim)
        return DimFact(simplify_dim(formula)) if dims and constant >= 0 else ScalarFact()
    if any(type(fact) is TensorFact for fact in facts):
        # `sum([branch(x) for branch in self.branches])`: Python adds left to right from `start`
        # (0 + t is t; then torch's broadcasting addition), each step as `a + b` in the code
        total = facts[0]
        for fact in facts[1:]:
            total = interp.arithmetic(cst.Add(), total, fact)
        return total
    return ScalarFact() if all(type(fact) in NUMBERS for fact in facts) else None


def type_call(interp, args):
    """`type(obj)` of an object of a class of the tree (the run's config included, an instance of
    its config class): that class; None for any other value."""
    if len(args.positional) != 1 or args.keywords or args.starred:
        return UNHANDLED  # `type(name, bases, namespace)` makes a class
    instance = interp.run.instance(interp.eval(args.positional[0]))
    return None if instance is None else ClassRef(instance.source, instance.cls)
