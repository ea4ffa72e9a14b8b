"""Python floats whose values the run knows — a config's `partial_rotary_factor: 0.5`, a literal
`0.25`, a product of a known size and one of them — so that `int(head_dim * 0.5)` is the size the
running program computes. The arithmetic is Python's own on the same numbers (the declared sizes and
the literal floats), so the result is what the program gets, rounding included; a value that is not
known stays a plain number (ScalarFact), as before."""

from __future__ import annotations

import math

import libcst as cst

from shape_annotations import evaluate_integer

from ...analysis.facts import DimFact, ScalarFact, StringFact
from ...analysis.interpreter import UNHANDLED
from ..values.library_objects import IntFact
from ..values.objects import NONE, BoolFact
from .known_values import int_fact

MAX_MAGNITUDE = 2.0 ** 63  # beyond the counts the estimator accepts: kept as an unknown number

_OPERATORS = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.Divide: lambda a, b: a / b, cst.FloorDivide: lambda a, b: a // b, cst.Modulo: lambda a, b: a % b,
    cst.Power: lambda a, b: a ** b,
}


class FloatValues:
    """id(ScalarFact) -> (fact, value): the fact kept so its id stays its own."""

    def __init__(self) -> None:
        self._values: dict = {}

    def make(self, value: float) -> ScalarFact:
        fact = ScalarFact()
        if math.isfinite(value) and abs(value) < MAX_MAGNITUDE:
            self._values[id(fact)] = (fact, value)
        return fact

    def know(self, fact: ScalarFact, value: float) -> None:
        """A float fact made elsewhere whose value is known (library_values' shared 0.0)."""
        self._values[id(fact)] = (fact, value)

    def value(self, fact):
        found = self._values.get(id(fact))
        return found[1] if found is not None and found[0] is fact else None


def number(run, fact):
    """The Python number a fact stands for: a known float, a dim of known size, an int or bool. A
    dim is the int the program computed (`one.size(1) - t` may be negative, `//` floors), as
    evaluate_integer reads it."""
    if type(fact) is ScalarFact:
        return run.floats.value(fact)
    if type(fact) is DimFact:
        return evaluate_integer(fact.dim, run.sizes)
    if type(fact) is IntFact:
        return fact.value
    if type(fact) is BoolFact:
        return int(fact.value)
    return None


def arithmetic(run, operator, left, right):
    """`a op b` where one side is a known float and both are known numbers: the float Python
    computes; UNHANDLED otherwise (the readings after this one apply)."""
    # `/` of any two known numbers is Python's float: `rate * i / (n - 1)` with a zero rate, and
    # `divisor / 2` of two sizes (`int(v + divisor / 2)` rounds a width to a multiple of divisor);
    # `int(hidden / heads)` still keeps its ratio of dims (library_builtins.int_of reads it first)
    divided = isinstance(operator, cst.Divide)
    if ScalarFact not in (type(left), type(right)) and not divided:
        return UNHANDLED
    compute = _OPERATORS.get(type(operator))
    a, b = number(run, left), number(run, right)
    if compute is None or a is None or b is None:
        return UNHANDLED
    try:
        result = compute(a, b)
    except (ZeroDivisionError, OverflowError):
        return UNHANDLED
    if type(result) is complex:  # `(-8) ** 0.5`: no float (Python's complex is no size either)
        return UNHANDLED
    return run.floats.make(float(result))


def negated(run, fact: ScalarFact) -> ScalarFact:
    """`-x` of a number: the negated float when x's value is known, else a number of no known value."""
    value = run.floats.value(fact)
    return ScalarFact() if value is None else run.floats.make(-value)


def truncated(run, fact):
    """`int(x)` of a known float: Python's truncation toward zero, as an int; None when unknown."""
    value = run.floats.value(fact) if type(fact) is ScalarFact else None
    return None if value is None else int(value)


# methods of a Python number the run computes when it knows the number (`math.log2(heads).is_integer()`
# picks ALiBi's slopes for a power-of-two head count)
METHODS = frozenset({"is_integer"})


def method_call(run, receiver, name: str):
    """`x.is_integer()` of a number: its truth when x's value is known, None (undecided) when not;
    UNHANDLED for a receiver that is no number."""
    if type(receiver) not in (ScalarFact, DimFact, IntFact, BoolFact):
        return UNHANDLED
    value = number(run, receiver)
    return None if value is None else BoolFact(float(value).is_integer())


def _number_type(fact) -> bool:
    return type(fact) in (ScalarFact, DimFact, IntFact, BoolFact)


def round_call(interp, args):
    """`round(x)` / `round(x, ndigits)` of known numbers: Python's round, halves to even
    (`round(2.5)` is 2) and an int without ndigits; an int itself without ndigits even when its
    value is not known (a size's formula kept); a number of no known value otherwise."""
    if args.starred or set(args.keywords) - {"ndigits"} or not 1 <= len(args.positional) + len(args.keywords) <= 2:
        return UNHANDLED
    facts = [interp.eval(value) for value in (*args.positional, *args.keywords.values())]
    digits = facts[1] if len(facts) == 2 and facts[1] is not NONE else None
    if digits is None and type(facts[0]) in (DimFact, IntFact):
        return facts[0]
    if digits is None and type(facts[0]) is BoolFact:
        return int_fact(int(facts[0].value))
    values = [number(interp.run, fact) for fact in (facts[0], *(() if digits is None else (digits,)))]
    if None in values or any(type(value) is float for value in values[1:]):
        return ScalarFact() if all(_number_type(fact) for fact in facts if fact is not NONE) else None
    result = round(*values)
    if type(result) is int:
        return int_fact(result) if abs(result) <= MAX_MAGNITUDE else ScalarFact()
    return interp.run.floats.make(result)


def float_call(interp, args):
    """`float(x)` of a known number (or a string of one, `float("0.25")`): Python's float; a
    number of no known value otherwise."""
    if args.starred or args.keywords or len(args.positional) > 1:
        return UNHANDLED
    if not args.positional:
        return interp.run.floats.make(0.0)
    fact = interp.eval(args.positional[0])
    if type(fact) is StringFact:
        try:
            return interp.run.floats.make(float(fact.value))
        except ValueError:
            return None  # Python raises
    value = number(interp.run, fact)
    if value is None:
        return ScalarFact() if _number_type(fact) else None
    try:
        return interp.run.floats.make(float(value))
    except OverflowError:
        return ScalarFact()
