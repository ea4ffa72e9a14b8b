"""Builtins over values the run knows exactly (known_values.py): `range`, `zip` (also
`zip(*lists)`), `enumerate`, `iter`/`next`, `list`/`tuple`, `dict`, `callable`, `filter` (calling
the filter: a function, a partial or an object with its own `__call__`), `any`/`all`,
`isinstance`, `len`, `int(flag)`, `max`/`min`; `functools.partial` over modules and `**` of known
mappings; and calls of what a call returns (`maybe(self.norm)(q)`).

A handler that evaluates its arguments always answers (a value or None), so nothing is evaluated
twice; UNHANDLED (arguments untouched, or only names read) leaves the call to the readings after."""

from __future__ import annotations

import libcst as cst


from ..analysis.arguments import CallArgs
from ..analysis.facts import DimFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, StringFact, TensorFact
from ..analysis.interpreter import UNHANDLED
from . import attribute_presence, backward_gaps, call_binding, config_copies, known_floats, known_math, mapping_keys, python_values
from .known_values import MAX_ITEMS, IteratorFact, exact_here, index_pairs, int_fact, int_of, is_plain, items_of, \
    partly_unknown, side_effect_free
from .library_objects import IntFact, MappingFact, TorchFunction
from .objects import NONE, BoolFact, ClassRef, FunctionRef, ModuleList

_SYNTHETIC = "tensorcost_known_"  # env names facts are passed to a callee through


def _shadowed(interp, name: str) -> bool:
    return name in interp.env or name in interp.source.definitions or name in interp.source.from_imports


def builtin(interp, node: cst.Call, args, name: str | None = None):
    """The builtins over known values, and the stdlib callables named by `name` (the callee's
    imported name); UNHANDLED leaves the call to the readings after this one. A handler that
    evaluates its arguments always answers (a value or None), so nothing is evaluated twice."""
    if name in _STDLIB:
        return _STDLIB[name](interp, args)
    if name in backward_gaps.OPS:
        backward_gaps.note(interp, node, args, name)  # shape from the transfer tables, backward not costed
    func = node.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "dict" \
            and func.attr.value == "fromkeys" and not _shadowed(interp, "dict"):
        return _fromkeys(interp, args)
    if not isinstance(func, cst.Name) or _shadowed(interp, func.value):
        return UNHANDLED
    handler = _BUILTINS.get(func.value)
    return UNHANDLED if handler is None else handler(interp, args)


def _range(interp, args):
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


def _zip(interp, args):
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


def _enumerate(interp, args):
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


def _iter(interp, args):
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    value = interp.eval(args.positional[0])
    if type(value) is IteratorFact:
        return value
    items = items_of(value)
    return None if items is None else IteratorFact(tuple(items))


def _next(interp, args):
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


def _sequence(interp, args):
    """`list(x)` / `tuple(x)`: a module list stays one; known iterables give their items."""
    from . import library_values
    from .library_objects import RecordFact

    if args.keywords or args.starred or len(args.positional) > 1:
        return UNHANDLED
    if not args.positional:
        return SequenceFact(())
    value = interp.eval(args.positional[0])
    if type(value) is ModuleList:
        return value
    if type(value) is python_values.GrowingList:
        return python_values.list_value(value)
    if type(value) is RecordFact:
        return library_values.as_sequence(value)
    items = items_of(value)
    return None if items is None else SequenceFact(tuple(items))


def _set(interp, args):
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
        key = item.value if type(item) is StringFact else \
            known_floats.number(interp.run, item) if type(item) in _NUMBERS else None
        if key is None:
            return None
        kept.setdefault(key, item)
    return SequenceFact(tuple(kept.values()))


def _sort_key(interp, item):
    """The value `sorted` orders a known plain item by, or None (a dim of no known size): strings,
    and numbers (ints, sizes, known floats: one kind, as Python compares them)."""
    if type(item) is StringFact:
        return (1, item.value)
    value = known_floats.number(interp.run, item) if type(item) in _NUMBERS else None
    return None if value is None else (0, value)


def _sorted(interp, args):
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


def _reversed(interp, args):
    """`reversed(x)` of a known sequence or of a module list's listed items."""
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    value = interp.eval(args.positional[0])
    if type(value) is ModuleList and value.count is None:
        return ModuleList(tuple(reversed(value.items)))
    if type(value) is ModuleList:
        return value  # one module repeated: the same in either order
    items = _listed(interp, value)
    return None if items is None else IteratorFact(tuple(reversed(items)))


def _setattr(interp, args):
    """`setattr(self, f"{kind}_inv_freq", buffer)` with a known name: the attribute, as `self.x = v`."""
    if args.keywords or args.starred or len(args.positional) != 3:
        return UNHANDLED
    owner, name, value = (interp.eval(node) for node in args.positional)
    if type(owner) is SelfFact and type(name) is StringFact:
        owner.attributes[name.value] = value
    elif type(owner) is SelfFact:
        interp.run.incomplete_objects.add(id(owner))  # an attribute the run cannot name: hasattr cannot tell
    return NONE


def _dict(interp, args):
    """`dict()`, `dict(a=1)`, `dict(mapping, a=1)`, `dict([("a", x), ...])` (and OrderedDict, the
    same in insertion order): a known mapping with string keys."""
    positional, keywords = _evaluated(interp, args)
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


def _fromkeys(interp, args):
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


_NOT_CALLABLE = (BoolFact, IntFact, DimFact, ScalarFact, StringFact, SequenceFact, MappingFact, TensorFact)


def callable_value(run, value):
    """`callable(x)` when known."""
    if value is NONE or type(value) in _NOT_CALLABLE:
        return False
    if type(value) in (FunctionRef, ClassRef, TorchFunction, python_values.Partial, ModuleFact) or \
            python_values.is_module_value(value):
        return True
    return None


def _callable(interp, args):
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    decided = callable_value(interp.run, interp.eval(args.positional[0]))
    return None if decided is None else BoolFact(decided)


def _filter(interp, args):
    """`filter(f, seq)` over a known sequence: the items whose `f(item)` is known true."""
    from .expressions import truth as known_truth

    if args.keywords or args.starred or len(args.positional) != 2:
        return UNHANDLED
    function, sequence = (interp.eval(value) for value in args.positional)
    items = items_of(sequence)
    if items is None:
        return None
    kept = []
    for item in items:
        result = item if function is NONE else call_with_facts(interp, args.positional[0], function, [item])
        decided = known_truth(interp.run, result)
        if decided is None:
            return None
        if decided:
            kept.append(item)
    return SequenceFact(tuple(kept))


def _any_all(want_all: bool):
    def handler(interp, args):
        from .expressions import truth as known_truth

        if args.keywords or args.starred or len(args.positional) != 1:
            return UNHANDLED
        items = items_of(interp.eval(args.positional[0]))
        if items is None:
            return None
        truths = [known_truth(interp.run, item) for item in items]
        if want_all:
            return BoolFact(False) if False in truths else (BoolFact(True) if None not in truths else None)
        return BoolFact(True) if True in truths else (BoolFact(False) if None not in truths else None)
    return handler


def _isinstance(interp, args):
    """`isinstance(x, T)` for the known values the per-file reading leaves undecided: an int that
    is not a size (`cast_tuple(0., n)`), a bool, a dict."""
    if args.keywords or args.starred or len(args.positional) != 2 or not is_plain(args.positional[0]):
        return UNHANDLED
    value = interp.eval(args.positional[0])
    types = args.positional[1]
    nodes = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
    names = {node.value if isinstance(node, cst.Name) else None for node in nodes}
    if None in names or any(_shadowed(interp, name) for name in names):
        return UNHANDLED
    kinds = {IntFact: {"int"}, BoolFact: {"bool", "int"}, MappingFact: {"dict"}}.get(type(value))
    containers = {"tuple", "list", "dict", "str", "int", "float", "bool", "set", "frozenset"}
    if kinds is None or not names <= containers:
        return UNHANDLED
    if type(value) is IntFact and "float" in names:
        return UNHANDLED  # `0.` is read as the int 0: whether it is a float is not known
    return BoolFact(bool(names & kinds))


def length(interp, args):
    """`len(masks)` of a list appended to a known number of times, `len(prefix)` of a string."""
    if args.keywords or args.starred or len(args.positional) != 1 or not is_plain(args.positional[0]):
        return UNHANDLED
    value = interp.eval(args.positional[0])
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
    return UNHANDLED


def _int(interp, args):
    """`int(flag)`, `int(not match)` of a known bool; other ints as before (the argument is free of
    sites, so reading it again there records nothing twice)."""
    if args.keywords or args.starred or len(args.positional) != 1 or not side_effect_free(args.positional[0]):
        return UNHANDLED
    value = interp.eval(args.positional[0])
    if type(value) is BoolFact:
        return int_fact(int(value.value))
    truncated = known_floats.truncated(interp.run, value)  # `int(head_dim * partial_rotary_factor)`
    return int_fact(truncated) if truncated is not None else UNHANDLED


def _bool(interp, args):
    """`bool(x)` of a value whose truth is known (`bool(cond(key))`)."""
    from .expressions import truth

    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    decided = truth(interp.run, interp.eval(args.positional[0]))
    return None if decided is None else BoolFact(decided)


def _extreme(pick):
    def handler(interp, args):
        """`max(1, n)` / `min(low, 0)` of known numbers: the argument Python picks (the first of
        equal ones), itself, as Python returns it (`min(start + block, seq_len)` is the dim seq_len,
        its formula kept); of numbers not all known, a number of no known value (`x - max(low, 0)`
        keeps x's shape); unknown otherwise."""
        if args.keywords or args.starred or len(args.positional) < 2:
            return UNHANDLED
        facts = [interp.eval(value) for value in args.positional]
        values = [known_floats.number(interp.run, fact) for fact in facts]
        if None in values:
            return ScalarFact() if all(type(fact) in _NUMBERS for fact in facts) else None
        chosen = values.index(pick(values))
        return facts[chosen]
    return handler


_NUMBERS = (ScalarFact, DimFact, IntFact, BoolFact)


_BUILTINS = {"range": _range, "zip": _zip, "enumerate": _enumerate, "iter": _iter, "next": _next,
             "list": _sequence, "tuple": _sequence, "dict": _dict, "callable": _callable, "filter": _filter,
             "any": _any_all(False), "all": _any_all(True), "isinstance": _isinstance, "len": length, "int": _int,
             "max": _extreme(max), "min": _extreme(min), "bool": _bool, "set": _set, "frozenset": _set,
             "setattr": _setattr, "sorted": _sorted, "reversed": _reversed}
def _chain(interp, args):
    """`itertools.chain(a, b, ...)` of known sequences (module lists with listed items too): one
    iterator over all their items in turn."""
    if args.keywords:
        return UNHANDLED
    items = []
    for value in _evaluated(interp, args)[0]:
        part = _listed(interp, value)
        if part is None:
            return None
        items.extend(part)
        if len(items) > MAX_ITEMS:
            return None
    return IteratorFact(tuple(items))


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


# stdlib callables by their imported name (`from collections import OrderedDict`)
_STDLIB = {"collections.OrderedDict": _dict, "itertools.chain": _chain, "copy.deepcopy": config_copies.deepcopy_call,
           "copy.copy": config_copies.copy_call, **known_math.FUNCTIONS}


def call_with_facts(interp, func_node, callee, facts: list):
    """Call `callee` (a value) with argument facts, through env names the call reads."""
    names = []
    for index, fact in enumerate(facts):
        name = f"{_SYNTHETIC}{id(func_node)}_{index}"
        interp.env[name] = fact
        names.append(cst.Name(name))
    call = cst.Call(func=func_node, args=[cst.Arg(name) for name in names])
    try:
        return python_values.call_value(interp, call, callee, CallArgs(names, {}, False))
    finally:
        for name in names:
            interp.env.pop(name.value, None)


def partial(interp, args):
    """`functools.partial(block, **kwargs)` with a known mapping spliced, or over a module object:
    a Partial as python_values makes one; UNHANDLED for what python_values.make_partial reads."""
    if not args.positional or not is_plain(args.positional[0]):
        return UNHANDLED
    func = args.positional[0]
    name = interp.ctx.settings.imports.resolve(func)
    library = name is not None and name.startswith(("torch.", "einops."))
    callee = None if library else interp.eval(func)
    module_callee = type(callee) is SelfFact and interp.run.instance(callee) is not None
    if not args.starred and not module_callee:
        return UNHANDLED
    if args.stars.get(id(func)):
        return None
    if not library and not module_callee and type(callee) not in (FunctionRef, ClassRef, python_values.Partial):
        return None
    rest = CallArgs(args.positional[1:], args.keywords, args.starred,
                    {key: star for key, star in args.stars.items() if key != id(func)})
    if any(star == "*" for star in rest.stars.values()):
        for value in rest.positional:
            interp.eval(value)
        return None  # `partial(f, *items)`: which positions are bound is left unknown
    positional, keywords = _evaluated(interp, rest)
    return python_values.Partial(name if library else None, None if library else callee, tuple(positional),
                                 tuple(keywords.items()))


def call_of_call(interp, node: cst.Call, args):
    """`maybe(self.norm)(q)`: the inner call evaluated once, then its value called when it is one
    the run can call; otherwise the arguments walked and the result unknown."""
    callee = interp.eval(node.func)
    if type(callee) in (FunctionRef, ClassRef, python_values.Partial) or \
            type(callee) is SelfFact and interp.run.instance(callee) is not None:
        return python_values.call_value(interp, node, callee, args)
    single = len(args.positional) == 1 and not args.keywords and not args.starred
    if single and python_values.is_module_value(callee):  # `getattr(self, f"{kind}_proj")(x)`
        return interp.run.apply_module(interp, node, callee, interp.eval(args.positional[0]))
    attribute_presence.mark_handed(interp.run, [interp.eval(value) for value in [*args.positional,
                                                                                  *args.keywords.values()]])
    if callee is None or python_values.is_module_value(callee):  # its cost is unknown: say so
        interp.run.not_followed(interp.ctx, node, "the callee is the result of a call the run cannot read")
    return None
