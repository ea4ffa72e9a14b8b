"""Python's `math` module over the numbers the run knows (known_floats.py): its constants are
floats of their values, and its functions compute what Python computes from the same numbers —
`math.floor(dim * math.log(n / (r * 2 * math.pi)) / (2 * math.log(base)))` is the int the program
gets. A value a model divides a tensor by, or offsets a range with, is then known to be a number,
so the tensor keeps its shape (an unknown value might be a tensor that broadcasts). An argument
not known, or a domain error, leaves a number of no known value (ScalarFact), never a guess."""

from __future__ import annotations

import math

from ...analysis.facts import ScalarFact
from ...analysis.interpreter import UNHANDLED
from . import known_floats
from .known_values import int_fact

CONSTANTS = {"math.pi": math.pi, "math.e": math.e, "math.tau": math.tau, "math.inf": math.inf, "math.nan": math.nan}
_MAX_INT = 2 ** 63 - 1  # an int past the counts the estimator accepts stays an unknown number
_FLOAT_RESULTS = {
    "math.log": math.log, "math.log2": math.log2, "math.log10": math.log10, "math.log1p": math.log1p,
    "math.exp": math.exp, "math.expm1": math.expm1, "math.sqrt": math.sqrt, "math.pow": math.pow,
    "math.sin": math.sin, "math.cos": math.cos, "math.tan": math.tan, "math.atan": math.atan,
    "math.atan2": math.atan2, "math.tanh": math.tanh, "math.fabs": math.fabs, "math.hypot": math.hypot,
}
_INT_RESULTS = {"math.floor": math.floor, "math.ceil": math.ceil, "math.trunc": math.trunc, "math.gcd": math.gcd,
                "math.isqrt": math.isqrt, "math.lcm": math.lcm}


def constant(run, resolved: str | None):
    """`math.pi` (the imported name resolved): a float of its value (`math.inf` a number of no kept
    value: known_floats keeps finite values only); None for any other name."""
    value = CONSTANTS.get(resolved)
    return None if value is None else run.floats.make(value)


def _function(compute):
    def handler(interp, args):
        if args.keywords or args.starred:
            return UNHANDLED
        numbers = [known_floats.number(interp.run, interp.eval(value)) for value in args.positional]
        if None in numbers:
            return ScalarFact()
        try:
            result = compute(*numbers)
        except (ValueError, TypeError, OverflowError, ZeroDivisionError):
            return ScalarFact()
        if isinstance(result, int):
            return int_fact(result) if abs(result) <= _MAX_INT else ScalarFact()
        return interp.run.floats.make(result)
    return handler


# the math functions by their imported name, read by known_builtins.builtin
FUNCTIONS = {name: _function(compute) for name, compute in {**_FLOAT_RESULTS, **_INT_RESULTS}.items()}
