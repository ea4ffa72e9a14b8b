"""Plain Python values a whole-model run knows exactly — ints, strings, booleans, None, tuples,
lists and dicts of them — and what code does with them before any tensor exists: tuples repeated,
indexed by known ints and compared, string slices (`key[len(prefix):]`), `{**d, k: v}`, f-strings
of known parts, `%` and `|` on known values. The builtins over them are in known_builtins.py, loops and
comprehensions over them in known_iteration.py, their methods in known_methods.py, and changes to
known lists and dicts in place in container_changes.py.

Configuration code builds its layers this way (x-transformers' `default_block * depth`, its
`groupby_prefix_and_trim` kwarg splitting, `default(...)` helpers). Each function here either
computes the value Python would, or says unknown (None) — never a guess; UNHANDLED leaves a
construct to the readings that applied before."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from shape_annotations import BinOp, Const, simplify_dim

from ...analysis.facts import DimFact, SequenceFact, StringFact, TensorFact, known_int
from ...analysis.interpreter import UNHANDLED
from ...analysis.literals import int_value
from . import python_values
from .call_binding import UNKNOWN_REST
from ..values.library_objects import IntFact, MappingFact
from ..values.mapping_keys import key_fact, key_of
from ..values.objects import BoolFact, ModuleList
from ..values.pure_expressions import is_plain, side_effect_free  # noqa: F401 - read through known_values too

MAX_ITEMS = 4096  # a known sequence longer than this is not materialised (bounded work)


@dataclass(eq=False)
class IteratorFact:
    """`iter(seq)` over a known sequence: `next(it, default)` hands out its items in turn."""

    items: tuple
    position: int = 0
    unknown: bool = False  # advanced where the run cannot count how often (inside a repeated loop)

    def remaining(self) -> tuple | None:
        return None if self.unknown else self.items[self.position:]


# -- ints ---------------------------------------------------------------------------------------------

def int_fact(value: int):
    """Python's int as the run's facts hold it: a size for >= 1, an IntFact otherwise."""
    return DimFact(Const(value)) if value >= 1 else IntFact(value)


def index_pairs(items, start: int = 0) -> tuple:
    """What `enumerate(items, start)` yields: `(index, item)` tuples."""
    return tuple(SequenceFact((int_fact(start + i), item)) for i, item in enumerate(items))


def int_of(run, fact):
    """The Python int a fact is known to be, or None (a bool counts as its int, as in Python)."""
    if type(fact) is BoolFact:
        return int(fact.value)
    return known_int(fact, run.sizes)


def zero_float(node: cst.Float):
    """`0.` is zero: `layer_dropout > 0.` compares it (as `1.` is the size 1 already)."""
    try:
        return IntFact(0) if float(node.value) == 0 else None
    except ValueError:
        return None


# -- sequences, containers and objects ---------------------------------------------------------------------

def appended_items(value) -> tuple | None:
    """The items a list built by appends holds, in order (`outs.append(y)` in straight-line code or
    a loop run index by index, then `torch.stack(outs)`), when every run's count is a known number;
    None otherwise: appends under a loop read once for many iterations count symbolically, and a
    join of them is unknown, never one item's shape."""
    if value.unknown or any(type(count) is not Const for _, count in value.runs) \
            or sum(count.value for _, count in value.runs) > MAX_ITEMS:
        return None
    return tuple(item for item, count in value.runs for _ in range(count.value))


def appended_data(value):
    """The items a list of data grown by appends holds (no module among them), each listed: `for ba
    in stack_args` runs each in turn, as Python does, even where two items are equal. None otherwise."""
    items = appended_items(value)
    return SequenceFact(items) if items and not any(python_values.is_module_value(i) for i in items) else None


def items_of(value):
    """The items iterating `value` yields, when known exactly: a tuple, a list, a dict's keys, a
    list of listed modules, what an iterator has left; None otherwise."""
    if type(value) is SequenceFact:
        return value.items
    if type(value) is IteratorFact:
        return value.remaining()
    if type(value) is MappingFact:
        return None if partly_unknown(value) else tuple(key_fact(key) for key, _ in value.items)
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
        return True if any(key != UNKNOWN_REST for key, _ in fact.items) else (None if fact.items else False)
    if type(fact) is IteratorFact:
        return True
    if type(fact) is python_values.GrowingList and not fact.unknown:
        if not fact.runs:
            return False
        if any(type(count) is Const and count.value > 0 for _, count in fact.runs):
            return True  # an item appended once: `to_cat.append(cls_token)` then `if to_cat:`
    return None


def is_object(value) -> bool:
    """A value that is certainly not None: a module, a partial, a list or iterator being built."""
    return python_values.is_module_value(value) or type(value) in (
        python_values.Partial, python_values.GrowingList, IteratorFact)


def rank(tensor: TensorFact):
    """`x.ndim` of a tensor whose rank is known."""
    from ...analysis import shape_ops

    if tensor.shape is None or shape_ops.has_group(tensor.shape):
        return None
    return int_fact(len(tensor.shape))


def is_range_call(node, env) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range" \
        and "range" not in env


def range_argument(interp, node):
    """n of a comprehension `[element for target in range(n)]` (one `for`, no `if`, the builtin
    range with one argument), else None."""
    loop = node.for_in
    if loop.inner_for_in is None and not loop.ifs and is_range_call(loop.iter, interp.env) and len(loop.iter.args) == 1:
        return loop.iter.args[0].value
    return None


def _known_int_index(interp, node):
    fact = interp.eval(node)
    return int_of(interp.run, fact) if type(fact) in (IntFact, DimFact) else None


def _same_items(items) -> bool:
    """Every item the same plain value (strings, numbers, None): what any valid index reads."""
    first = items[0]
    return type(first) in (StringFact, BoolFact, IntFact) and all(item == first for item in items[1:])


def subscript(interp, node: cst.Subscript):
    """`seq[i]`, `layers[i]` with i a known int, `key[prefix_len:]` of a known string, and
    `mapping[key]`. Only names and attribute chains are read here (reading them twice records
    nothing), so UNHANDLED hands the node on unchanged."""
    elements = list(node.slice)
    if len(elements) != 1 or not is_plain(node.value):
        return UNHANDLED
    part = elements[0].slice
    if isinstance(part, cst.Index):
        if not is_plain(part.value) or int_value(part.value) is not None:
            return UNHANDLED
        value = interp.eval(node.value)
        if type(value) is MappingFact:
            key = key_of(interp.run, interp.eval(part.value))
            return None if key is None else value.get(key)
        items = value.items if type(value) is SequenceFact or type(value) is ModuleList and value.count is None \
            else None
        if items is None:
            return UNHANDLED
        index = _known_int_index(interp, part.value)
        if index is None and type(value) is SequenceFact and items and _same_items(items):
            return items[0]  # `config.layer_types[i]` of a loop's unknown i: every item is the same string
        if index is None and type(value) is SequenceFact and items:
            picked = interp.run.loop_indices.pick(interp.run, value, interp.eval(part.value))
            if picked is not None:  # `self.layers[layer_idx]` in a pass over the layers (loop_indices)
                return picked
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
            if not side_effect_free(bound):
                return UNHANDLED
            bounds.append(int_of(interp.run, interp.eval(bound)))
            if bounds[-1] is None:
                return None
        return value.derived(value.value[bounds[0]:bounds[1]])
    return UNHANDLED


def partly_unknown(mapping: MappingFact) -> bool:
    """A mapping with keys the run does not know (`**kwargs` that received an unknown `**value`)."""
    return any(key == UNKNOWN_REST for key, _ in mapping.items)


# -- operators and displays -------------------------------------------------------------------------------

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
    # bool is an int subclass: `2 + flag`, `n * use_bias`, `True + True` compute with 0 and 1
    left, right = (IntFact(int(fact.value)) if type(fact) is BoolFact else fact for fact in (left, right))
    if isinstance(operator, cst.Modulo) and type(left) in (IntFact, DimFact) and type(right) in (IntFact, DimFact):
        a, b = int_of(run, left), int_of(run, right)
        return int_fact(a % b) if a is not None and b else UNHANDLED
    if isinstance(operator, cst.FloorDivide) and type(left) in (IntFact, DimFact) and type(right) in (IntFact, DimFact):
        a, b = int_of(run, left), int_of(run, right)
        if a is not None and b and a % b:  # `n // 128` of n=32: Python's floor (a dim's `//` divides exactly)
            return int_fact(a // b)
    if isinstance(operator, cst.Multiply):
        sequence, count = (left, right) if type(left) is SequenceFact else (right, left)
        if type(sequence) is SequenceFact and type(count) is IntFact:  # a bool is an IntFact by now
            times = max(int_of(run, count), 0)
            return SequenceFact(sequence.items * times)
    if isinstance(operator, cst.Subtract) and _literal_int(left) is not None and _literal_int(right) is not None:
        value = _literal_int(left) - _literal_int(right)
        if value <= 0:
            return int_fact(value)  # `Tree(depth - 1)` down to 0: a known int, so `depth > 0` is decided
    if isinstance(operator, (cst.Add, cst.Subtract)) and IntFact in (type(left), type(right)) \
            and _literal_int(left) is not None and _literal_int(right) is not None:
        # a negative int and a literal (`-self.sliding_window + 1`, a slice's start): Python's int
        a, b = _literal_int(left), _literal_int(right)
        return int_fact(a + b if isinstance(operator, cst.Add) else a - b)
    if IntFact in (type(left), type(right)) and {type(left), type(right)} <= {IntFact, DimFact}:
        return _int_and_size(run, operator, left, right)
    return UNHANDLED


_INT_OPERATORS = {cst.Add: ("+", lambda a, b: a + b), cst.Subtract: ("-", lambda a, b: a - b),
                  cst.Multiply: ("*", lambda a, b: a * b), cst.FloorDivide: ("//", lambda a, b: a // b)}


def _int_and_size(run, operator, left, right):
    """A plain int with a size (`i * self.block_size`, `start + block`, `0 - n`): the Python int the
    program computes from the declared sizes, kept as a dim expression while it is a size (>= 1,
    so formulas stay in the dims) and an IntFact otherwise (`0 * block_size` is 0, an index)."""
    rule = _INT_OPERATORS.get(type(operator))
    a, b = int_of(run, left), int_of(run, right)
    if rule is None or a is None or b is None or (rule[0] == "//" and b == 0):
        return UNHANDLED
    value = rule[1](a, b)
    if value < 1:
        return IntFact(value)
    dims = [fact.dim if type(fact) is DimFact else Const(fact.value) if fact.value >= 0 else None
            for fact in (left, right)]
    if None in dims:  # a negative literal: the size as its number
        return DimFact(Const(value))
    return DimFact(simplify_dim(BinOp(rule[0], dims[0], dims[1])))


def _literal_int(fact):
    """The int a literal-valued fact holds (not a dim's size: `T - T` stays a dim expression)."""
    if type(fact) is IntFact:
        return fact.value
    if type(fact) is DimFact and type(fact.dim) is Const:
        return fact.dim.value
    return None


def formatted_string(interp, node: cst.FormattedString):
    """`f'b h i d, {kv_einsum_eq} -> b h i j'` with every part a known string or int: the string
    (an einsum's subscripts built this way are then a literal pattern); None otherwise."""
    text = []
    known = True
    origin = None
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
            origin = origin or value.origin
        elif type(value) in (IntFact, DimFact) and int_of(interp.run, value) is not None:
            text.append(str(int_of(interp.run, value)))
        else:
            known = False
    if not known or "{" in "".join(p.value for p in node.parts if isinstance(p, cst.FormattedStringText)):
        return None  # `{{` escapes in the text: not read
    if sum(map(len, text)) > MAX_ITEMS:  # `s = f"{s}{s}"` line after line: 2**n characters, not kept
        return None
    return StringFact("".join(text), origin)


def dict_display(interp, node: cst.Dict):
    """`{**base, key: value}` with `**` of known mappings: the merged mapping, later keys winning; a
    spread that is not known leaves the rest unknown (UNKNOWN_REST); None when a key is not known."""
    items: dict = {}
    known = True
    for element in node.elements:
        if isinstance(element, cst.StarredDictElement):
            spread = interp.eval(element.value)
            if type(spread) is MappingFact:
                items.update(spread.items)
            else:
                items[UNKNOWN_REST] = None
            continue
        key, value = key_of(interp.run, interp.eval(element.key)), interp.eval(element.value)
        if key is not None:
            items[key] = value
        else:
            known = False
    return MappingFact(tuple(items.items())) if known else None
