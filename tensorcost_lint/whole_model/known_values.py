"""Plain Python values a whole-model run knows exactly — ints, strings, booleans, None, tuples,
lists and dicts of them — and what code does with them before any tensor exists: tuples repeated
and concatenated, `zip`/`enumerate`/`range`/`iter`/`next`/`filter` over known sequences,
comprehensions over them, dict methods (`kwargs.get('dim_head', 64)`), string tests
(`key.startswith(prefix)`), `%` and `|` on known values, and loops over known sequences run item
by item (`for layer_type in ('a', 'f') * depth`).

Configuration code builds its layers this way (x-transformers' `default_block * depth`, its
`groupby_prefix_and_trim` kwarg splitting, `default(...)` helpers). Each function here either
computes the value Python would, or says unknown (None) — never a guess; UNHANDLED leaves a
construct to the readings that applied before."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from shape_annotations import Const, evaluate_dim

from ..analysis.arguments import CallArgs
from ..analysis.facts import DimFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, StringFact, TensorFact
from ..analysis.interpreter import UNHANDLED
from ..analysis.literals import int_value
from . import call_binding, python_values
from .library_objects import IntFact, MappingFact, TorchFunction
from .objects import NONE, BoolFact, ClassRef, FunctionRef, ModuleList

MAX_ITEMS = 4096  # a known sequence longer than this is not materialised (bounded work)
_SYNTHETIC = "tensorcost_known_"  # env names facts are passed to a callee through


@dataclass(eq=False)
class IteratorFact:
    """`iter(seq)` over a known sequence: `next(it, default)` hands out its items in turn."""

    items: tuple
    position: int = 0

    def remaining(self) -> tuple:
        return self.items[self.position:]


# -- ints ---------------------------------------------------------------------------------------------

def int_fact(value: int):
    """Python's int as the run's facts hold it: a size for >= 1, an IntFact otherwise."""
    return DimFact(Const(value)) if value >= 1 else IntFact(value)


def int_of(run, fact):
    """The Python int a fact is known to be, or None (a bool counts as its int, as in Python)."""
    if type(fact) is IntFact:
        return fact.value
    if type(fact) is BoolFact:
        return int(fact.value)
    if type(fact) is DimFact:
        try:
            value = evaluate_dim(fact.dim, run.sizes)
        except Exception:  # noqa: BLE001 - an unbound dim is not a known int
            return None
        return value if isinstance(value, int) else None
    return None


def zero_float(node: cst.Float):
    """`0.` is zero: `layer_dropout > 0.` compares it (as `1.` is the size 1 already)."""
    try:
        return IntFact(0) if float(node.value) == 0 else None
    except ValueError:
        return None


# -- sequences ------------------------------------------------------------------------------------------

def items_of(value):
    """The items iterating `value` yields, when known exactly: a tuple, a list, a dict's keys, a
    list of listed modules, what an iterator has left; None otherwise."""
    if type(value) is SequenceFact:
        return value.items
    if type(value) is IteratorFact:
        return value.remaining()
    if type(value) is MappingFact:
        return tuple(StringFact(key) for key, _ in value.items)
    if type(value) is ModuleList and value.count is None:
        return value.items
    if type(value) is python_values.GrowingList and not value.unknown:
        listed = value.as_module_list()
        if not value.runs:
            return ()
        return listed.items if listed is not None and listed.count is None else None
    return None


def truth(fact):
    """Truth of a known container (`if mems:`), or None."""
    if type(fact) is SequenceFact:
        return bool(fact.items)
    if type(fact) is MappingFact:
        return bool(fact.items)
    if type(fact) is IteratorFact:
        return True
    if type(fact) is python_values.GrowingList and not fact.unknown and not fact.runs:
        return False
    return None


def _known_int_index(interp, node):
    fact = interp.eval(node)
    return int_of(interp.run, fact) if type(fact) in (IntFact, DimFact) else None


def subscript(interp, node: cst.Subscript):
    """`seq[i]`, `layers[i]` with i a known int, `key[prefix_len:]` of a known string, and
    `mapping[key]`. Only names and attribute chains are read here (reading them twice records
    nothing), so UNHANDLED hands the node on unchanged."""
    from .expressions import is_plain

    elements = list(node.slice)
    if len(elements) != 1 or not is_plain(node.value):
        return UNHANDLED
    part = elements[0].slice
    if isinstance(part, cst.Index):
        if not is_plain(part.value) or int_value(part.value) is not None:
            return UNHANDLED
        value = interp.eval(node.value)
        if type(value) is MappingFact:
            key = interp.eval(part.value)
            return value.get(key.value) if type(key) is StringFact else None
        items = value.items if type(value) is SequenceFact or type(value) is ModuleList and value.count is None \
            else None
        if items is None:
            return UNHANDLED
        index = _known_int_index(interp, part.value)
        if index is None or not -len(items) <= index < len(items):
            return UNHANDLED
        return items[index]
    if isinstance(part, cst.Slice) and part.step is None:
        value = interp.eval(node.value)
        if type(value) is not StringFact:
            return UNHANDLED
        bounds = []
        for bound in (part.lower, part.upper):
            if bound is None:
                bounds.append(None)
                continue
            if not _side_effect_free(bound):
                return UNHANDLED
            bounds.append(int_of(interp.run, interp.eval(bound)))
            if bounds[-1] is None:
                return None
        return StringFact(value.value[bounds[0]:bounds[1]])
    return UNHANDLED


# -- calls of builtins ------------------------------------------------------------------------------------

def _shadowed(interp, name: str) -> bool:
    return name in interp.env or name in interp.source.definitions or name in interp.source.from_imports


def builtin(interp, node: cst.Call, args):
    """The builtins over known values; UNHANDLED leaves the call to the readings after this one.
    A handler that evaluates its arguments always answers (a value or None), so nothing is
    evaluated twice."""
    func = node.func
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


def is_range_call(node, env) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range" \
        and "range" not in env


def _evaluated(interp, args):
    return call_binding.evaluate_arguments(interp, args)


def _zip(interp, args):
    """`zip(a, b)` and `zip(*lists)` over known sequences: the tuples Python makes. Module lists
    repeated by a count keep the reading of python_values.zipped."""
    from .expressions import is_plain

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
    from .expressions import is_plain

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
    return SequenceFact(tuple(SequenceFact((int_fact(start + i), item)) for i, item in enumerate(items)))


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
    if type(iterator) is not IteratorFact:
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


def _dict(interp, args):
    """`dict()`, `dict(a=1)`, `dict(mapping, a=1)`: a known mapping."""
    positional, keywords = _evaluated(interp, args)
    if len(positional) > 1 or args.starred and not all(type(v) is MappingFact for v in positional):
        return None
    base = dict(positional[0].items) if positional and type(positional[0]) is MappingFact else {}
    if positional and type(positional[0]) is not MappingFact:
        return None
    base.update(keywords)
    return MappingFact(tuple(base.items()))


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
    from .expressions import is_plain

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


_BUILTINS = {"range": _range, "zip": _zip, "enumerate": _enumerate, "iter": _iter, "next": _next,
             "list": _sequence, "tuple": _sequence, "dict": _dict, "callable": _callable, "filter": _filter,
             "any": _any_all(False), "all": _any_all(True), "isinstance": _isinstance}


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


# -- methods of known values ----------------------------------------------------------------------------

def method_call(interp, func: cst.Attribute, receiver, args):
    """`d.get(k, default)`, `d.items()`, `s.startswith(p)`, `seq.pop(0)`…; UNHANDLED otherwise.
    A method that changes its receiver rebinds the name it was read from (the value is a new
    fact); through any other expression it is unknown."""
    name = func.attr.value
    if type(receiver) is MappingFact:
        return _mapping_method(interp, func, receiver, name, args)
    if type(receiver) is StringFact and name in ("startswith", "endswith") and len(args.positional) == 1 \
            and not args.keywords:
        prefix = interp.eval(args.positional[0])
        if type(prefix) is not StringFact:
            return None
        test = receiver.value.startswith if name == "startswith" else receiver.value.endswith
        return BoolFact(test(prefix.value))
    if type(receiver) is SequenceFact and name == "copy" and not args.positional and not args.keywords:
        return receiver
    if type(receiver) is SequenceFact and name == "pop" and len(args.positional) <= 1 and not args.keywords:
        index = int_of(interp.run, interp.eval(args.positional[0])) if args.positional else -1
        if index is None or not -len(receiver.items) <= index < len(receiver.items):
            _forget(interp, func.value)
            return None
        items = list(receiver.items)
        item = items.pop(index)
        _rebind(interp, func.value, SequenceFact(tuple(items)))
        return item
    return UNHANDLED


def _mapping_method(interp, func, mapping: MappingFact, name: str, args):
    positional = [interp.eval(value) for value in args.positional]
    if args.keywords or args.starred:
        if name == "update" and not positional:
            keywords = {key: interp.eval(value) for key, value in args.keywords.items()}
            _rebind(interp, func.value, MappingFact(tuple({**dict(mapping.items), **keywords}.items())))
            return NONE
        return UNHANDLED
    if name in ("keys", "values", "items", "copy") and not positional:
        if name == "copy":
            return mapping
        if name == "keys":
            return SequenceFact(tuple(StringFact(key) for key, _ in mapping.items))
        if name == "values":
            return SequenceFact(tuple(value for _, value in mapping.items))
        return SequenceFact(tuple(SequenceFact((StringFact(key), value)) for key, value in mapping.items))
    if name in ("get", "pop") and 1 <= len(positional) <= 2:
        key = positional[0]
        if type(key) is not StringFact:
            if name == "pop":
                _forget(interp, func.value)
            return None
        default = positional[1] if len(positional) == 2 else NONE
        present = dict(mapping.items)
        if key.value not in present:
            return default if name == "get" or len(positional) == 2 else None
        if name == "pop":
            _rebind(interp, func.value, MappingFact(tuple((k, v) for k, v in mapping.items if k != key.value)))
        return present[key.value]
    return UNHANDLED


def _rebind(interp, node, value) -> None:
    if isinstance(node, cst.Name):
        interp.env[node.value] = value
    else:
        _forget(interp, node)


def _forget(interp, node) -> None:
    """The receiver changed in a way not followed: what it held is unknown from here on."""
    if isinstance(node, cst.Name):
        interp.env[node.value] = None
    elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        owner = interp.env.get(node.value.value)
        if type(owner) is SelfFact:
            owner.attributes[node.attr.value] = None


# -- operators -------------------------------------------------------------------------------------------

def arithmetic(run, operator, left, right):
    """`a | b` of booleans (`return_hiddens |= ...`), `a % b` and `a // b` of known ints, and a
    tuple times a known int on either side; UNHANDLED otherwise."""
    if type(left) is BoolFact and type(right) is BoolFact:
        if isinstance(operator, cst.BitOr):
            return BoolFact(left.value or right.value)
        if isinstance(operator, cst.BitAnd):
            return BoolFact(left.value and right.value)
        if isinstance(operator, cst.BitXor):
            return BoolFact(left.value != right.value)
    if isinstance(operator, cst.Modulo) and type(left) in (IntFact, DimFact) and type(right) in (IntFact, DimFact):
        a, b = int_of(run, left), int_of(run, right)
        return int_fact(a % b) if a is not None and b else UNHANDLED
    if isinstance(operator, cst.Multiply):
        sequence, count = (left, right) if type(left) is SequenceFact else (right, left)
        if type(sequence) is SequenceFact and type(count) in (IntFact, BoolFact):
            times = max(int_of(run, count), 0)
            return SequenceFact(sequence.items * times)
    return UNHANDLED


def compare(interp, node: cst.Comparison):
    """A comparison of known plain values evaluated once (`(num % den) == 0`, `ind == n - 1`):
    its boolean when every operand is known; UNHANDLED (nothing evaluated) when an operand is not
    free of call sites to evaluate first."""
    from .decisions import decide_values

    operands = [node.left, *(target.comparator for target in node.comparisons)]
    if not all(_side_effect_free(operand) for operand in operands):
        return UNHANDLED
    facts = [interp.eval(operand) for operand in operands]
    if any(type(fact) is TensorFact for fact in facts):
        return UNHANDLED  # elementwise: the per-file reading (operands are free to evaluate again)
    result = True
    for (left, left_node), (right, right_node), target in zip(zip(facts, operands), zip(facts[1:], operands[1:]),
                                                              node.comparisons):
        decided = decide_values(interp.run, target.operator, left, left_node, right, right_node)
        if decided is None:
            return None
        result = result and decided
    return BoolFact(result)


def _side_effect_free(node) -> bool:
    """Arithmetic over names, attributes, literals and `len(...)` of them: evaluating it records no
    site (so an undecided comparison may be read again by the per-file evaluator)."""
    from .expressions import is_plain

    if is_plain(node):
        return True
    if isinstance(node, cst.BinaryOperation):
        return _side_effect_free(node.left) and _side_effect_free(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _side_effect_free(node.expression)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(_side_effect_free(e.value) for e in node.elements)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len":
        return all(_side_effect_free(a.value) for a in node.args)
    return False


# -- comprehensions and loops over known sequences --------------------------------------------------------

def comprehension(interp, node):
    """`[f(x) for x in seq]`, `(… for …)` and `{k: v for k, v in d.items()}` over known sequences:
    the element once per item, with the loop's names bound to it; `if` clauses decided per item.
    A comprehension over `range(n)` keeps the repeat reading (UNHANDLED). When an iterable or a
    clause is not known, the element is walked with its names unknown and the value is None."""
    loops = []
    loop = node.for_in
    while loop is not None:
        loops.append(loop)
        loop = loop.inner_for_in
    if is_range_call(loops[0].iter, interp.env) or any(getattr(l, "asynchronous", None) for l in loops):
        return UNHANDLED
    results: list = []
    known = _expand(interp, node, loops, interp.env, results)
    if not known:
        return None
    if isinstance(node, cst.DictComp):
        if any(type(key) is not StringFact for key, _ in results):
            return None
        return MappingFact(tuple(dict((key.value, value) for key, value in results).items()))
    return SequenceFact(tuple(results))


def _expand(interp, node, loops, env, results) -> bool:
    loop, rest = loops[0], loops[1:]
    scope = interp.with_env(dict(env))
    items = items_of(scope.eval(loop.iter))
    if items is None or len(items) > MAX_ITEMS:
        _walk_unknown(interp, node, loops, env)
        return False
    for item in items:
        inner = dict(env)
        bind_target(inner, loop.target, item)
        decided = True
        for clause in loop.ifs:
            truth_value = interp.run.decide(interp.with_env(inner), clause.test)
            if truth_value is None:
                _walk_unknown(interp, node, loops, env)
                return False
            decided = decided and truth_value
        if not decided:
            continue
        if rest:
            if not _expand(interp, node, rest, inner, results):
                return False
            continue
        element = interp.with_env(inner)
        if isinstance(node, cst.DictComp):
            results.append((element.eval(node.key), element.eval(node.value)))
        else:
            results.append(element.eval(node.elt))
        if len(results) > MAX_ITEMS:
            return False
    return True


def _walk_unknown(interp, node, loops, env) -> None:
    """The element's sites, with every loop name unknown."""
    unknown = dict(env)
    for loop in loops:
        for name in _names(loop.target):
            unknown[name] = None
    scope = interp.with_env(unknown)
    for loop in loops:
        for clause in loop.ifs:
            scope.walk(clause.test)
    if isinstance(node, cst.DictComp):
        scope.walk(node.key)
        scope.walk(node.value)
    else:
        scope.walk(node.elt)


def _names(target):
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _names(target.value)
    return []


def bind_target(env: dict, target, fact) -> None:
    """`for k, (a, b) in …`: names bound from a known tuple, unknown where it does not fit."""
    if isinstance(target, cst.Name):
        env[target.value] = fact
        return
    if isinstance(target, (cst.Tuple, cst.List)):
        elements = target.elements
        items = items_of(fact)
        if items is None or len(items) != len(elements) or any(isinstance(e, cst.StarredElement) for e in elements):
            for name in _names(target):
                env[name] = None
            return
        for element, item in zip(elements, items):
            bind_target(env, element.value, item)
        return
    for name in _names(target):
        env[name] = None


def loop_items(iterated, node: cst.For, enumerated: bool, env):
    """The items a `for` loop runs over, when the iterable is a known tuple, list, dict or iterator
    (not a module list, whose loops python_values reads, nor `range(n)`, which repeats): with
    their known index under `enumerate`. None otherwise."""
    if type(iterated) not in (SequenceFact, IteratorFact, MappingFact) or is_range_call(node.iter, env):
        return None
    items = items_of(iterated)
    if items is None or len(items) > python_values.MAX_UNROLLED:
        return None
    if type(iterated) is IteratorFact:
        iterated.position = len(iterated.items)  # the loop exhausts it
    if enumerated:
        items = tuple(SequenceFact((int_fact(i), item)) for i, item in enumerate(items))
    return items


def partial(interp, args):
    """`functools.partial(block, **kwargs)` with a known mapping spliced, or over a module object:
    a Partial as python_values makes one; UNHANDLED for what python_values.make_partial reads."""
    from .expressions import is_plain

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


def formatted_string(interp, node: cst.FormattedString):
    """`f'b h i d, {kv_einsum_eq} -> b h i j'` with every part a known string or int: the string
    (an einsum's subscripts built this way are then a literal pattern); None otherwise."""
    text = []
    known = True
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            text.append(part.value)
            continue
        value = interp.eval(part.expression)
        if part.conversion is not None or part.format_spec is not None or part.equal is not None:
            known = False
            continue
        if type(value) is StringFact:
            text.append(value.value)
        elif type(value) in (IntFact, DimFact) and int_of(interp.run, value) is not None:
            text.append(str(int_of(interp.run, value)))
        else:
            known = False
    if not known or "{" in "".join(p.value for p in node.parts if isinstance(p, cst.FormattedStringText)):
        return None  # `{{` escapes in the text: not read
    return StringFact("".join(text))


def call_of_call(interp, node: cst.Call, args):
    """`maybe(self.norm)(q)`: the inner call evaluated once, then its value called when it is one
    the run can call; otherwise the arguments walked and the result unknown."""
    callee = interp.eval(node.func)
    if type(callee) in (FunctionRef, ClassRef, python_values.Partial) or \
            type(callee) is SelfFact and interp.run.instance(callee) is not None:
        return python_values.call_value(interp, node, callee, args)
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)
    return None


def length(interp, args):
    """`len(masks)` of a list appended to a known number of times, `len(prefix)` of a string."""
    from .expressions import is_plain

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
    if type(value) is IteratorFact:
        return None
    return UNHANDLED


_BUILTINS["len"] = length


def rank(tensor: TensorFact):
    """`x.ndim` of a tensor whose rank is known."""
    from ..analysis import shape_ops

    if tensor.shape is None or shape_ops.has_group(tensor.shape):
        return None
    return int_fact(len(tensor.shape))


def is_object(value) -> bool:
    """A value that is certainly not None: a module, a partial, a list or iterator being built."""
    return python_values.is_module_value(value) or type(value) in (
        python_values.Partial, python_values.GrowingList, IteratorFact)


def _int(interp, args):
    """`int(flag)` of a known bool (`int(orthog_projected_values)`); other ints as before."""
    from .expressions import is_plain

    if args.keywords or args.starred or len(args.positional) != 1 or not is_plain(args.positional[0]):
        return UNHANDLED
    value = interp.eval(args.positional[0])
    return int_fact(int(value.value)) if type(value) is BoolFact else UNHANDLED


def _extreme(pick):
    def handler(interp, args):
        """`max(1, n)` / `min(a, b)` of known ints; unknown otherwise."""
        if args.keywords or args.starred or len(args.positional) < 2:
            return UNHANDLED
        values = [int_of(interp.run, interp.eval(value)) for value in args.positional]
        return None if None in values else int_fact(pick(values))
    return handler


_BUILTINS.update({"int": _int, "max": _extreme(max), "min": _extreme(min)})


def dict_display(interp, node: cst.Dict):
    """`{**base, key: value}` with `**` of known mappings: the merged mapping, later keys winning;
    None when a spread or a key is not known."""
    items: dict = {}
    known = True
    for element in node.elements:
        if isinstance(element, cst.StarredDictElement):
            spread = interp.eval(element.value)
            if type(spread) is MappingFact:
                items.update(spread.items)
            else:
                known = False
            continue
        key, value = interp.eval(element.key), interp.eval(element.value)
        if type(key) is StringFact:
            items[key.value] = value
        else:
            known = False
    return MappingFact(tuple(items.items())) if known else None
