"""`"layer%d" % (i + 1)`: printf-style formatting of a known string with known values, computed as
Python computes it (torchvision's and timm's dense blocks name their layers so, and a module
registered under a name the run cannot compute leaves its parent's children unknown).

Bounded: a conversion with a width or precision over 64, or one read from the arguments (`*`), is
not computed (`"%099999999d" % 1` would build a string of that size); a value the run does not
know, or a mapping (`%(name)s`), leaves the string unknown."""

from __future__ import annotations

import re

from ...analysis.facts import SequenceFact, StringFact
from ..values.objects import BoolFact
from . import known_floats

_SPEC = re.compile(r"%[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[a-zA-Z%]")
MAX_FIELD = 64  # widths and precisions computed; past it the string is left unknown


def percent(run, template: StringFact, right):
    """The StringFact `template % right`, or None when it cannot be computed."""
    for width, precision in _SPEC.findall(template.value):
        for number in (width, precision):
            if number == "*" or number and int(number) > MAX_FIELD:
                return None
    values = right.items if type(right) is SequenceFact else (right,)
    plain = []
    for value in values:
        known = _plain(run, value)
        if known is None:
            return None
        plain.append(known)
    try:
        return StringFact(template.value % tuple(plain))
    except (TypeError, ValueError, OverflowError):  # Python would raise: the run does not say what
        return None


def _plain(run, fact):
    if type(fact) is StringFact or type(fact) is BoolFact:
        return fact.value  # `"%s" % True` is "True"
    return known_floats.number(run, fact)
