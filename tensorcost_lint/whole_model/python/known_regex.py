"""Python's `re` module over strings the run knows: `re.split(r'(\\d.*)', 'k3')`, `re.sub` and
`re.findall` compute with Python's own `re` on the same pattern and text, so a block string
decoded into its options (`'ir_r2_k3_e6_c24'` split at its digits) gives the widths the program
gets. A pattern, text or flag not known, or one Python rejects, leaves the result unknown (None);
texts past known_values.MAX_ITEMS characters are not read (bounded work)."""

from __future__ import annotations

import re

from ...analysis.facts import SequenceFact, StringFact
from ...analysis.interpreter import UNHANDLED
from ..values.objects import NONE
from .known_values import MAX_ITEMS, int_of

# each function's parameters after the pattern, in order: (name, kind); `string` a known text,
# `replacement` a known text (a callable replacement is not read), `int` a known int
_PARAMETERS = {
    "re.split": (("string", str), ("maxsplit", int), ("flags", int)),
    "re.sub": (("repl", str), ("string", str), ("count", int), ("flags", int)),
    "re.findall": (("string", str), ("flags", int)),
}
_REQUIRED = {"re.split": 1, "re.sub": 2, "re.findall": 1}


def _plain(run, fact, kind):
    if kind is str:
        return fact.value if type(fact) is StringFact and len(fact.value) <= MAX_ITEMS else None
    number = int_of(run, fact)
    return number if type(number) is int else None


def _fact(value):
    """A result of `re` as facts: strings, None for a group that took no part, tuples of groups."""
    if value is None:
        return NONE
    if type(value) is str:
        return StringFact(value)
    return SequenceFact(tuple(_fact(item) for item in value))


def _function(name: str):
    parameters = _PARAMETERS[name]
    compute = getattr(re, name.split(".")[1])

    def handler(interp, args):
        names = [parameter for parameter, _ in parameters]
        if args.starred or len(args.positional) > 1 + len(parameters) or set(args.keywords) - {"pattern", *names}:
            return UNHANDLED
        facts = [interp.eval(value) for value in args.positional]
        given = dict(zip(["pattern", *names], facts))
        for keyword, value in args.keywords.items():
            given[keyword] = interp.eval(value)
        if "pattern" not in given or any(parameter not in given for parameter in names[:_REQUIRED[name]]):
            return None  # Python raises
        plain = {"pattern": _plain(interp.run, given.pop("pattern"), str)}
        for parameter, kind in parameters:
            if parameter in given:
                plain[parameter] = _plain(interp.run, given[parameter], kind)
        if None in plain.values():
            return None
        try:
            result = compute(**plain)
        except (re.error, TypeError, ValueError, OverflowError):
            return None
        if type(result) is str:
            return StringFact(result)
        return None if len(result) > MAX_ITEMS else _fact(result)
    return handler


# the `re` functions by their imported name, entries of library/builtin_registry.py's STDLIB
FUNCTIONS = {name: _function(name) for name in _PARAMETERS}
