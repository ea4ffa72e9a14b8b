"""Calling with values already computed: a partial's bound arguments, `filter`'s function applied
to each item, a choice of callees fed the same arguments, an autograd function's `apply`. The
call protocol reads arguments through `CallArgs`; these pass each value as a `Bound` argument
(analysis/given_values.py), which `eval` returns as it is and a whole-model run observes as the
read of a name (live storages, gradient flow), so nothing is evaluated twice and no name is
planted in the caller's environment."""

from __future__ import annotations

from contextlib import contextmanager

from ...analysis.arguments import CallArgs
from ...analysis.given_values import Bound


@contextmanager
def value_arguments(interp, positional=(), keywords=(), starred: bool = False, stars=None):
    """CallArgs of `positional` (facts) and `keywords` ((key, fact) pairs), as values. `stars` maps
    a positional index to `*`/`**` (an evaluated sequence the callee splices again). A context
    manager, as the call it serves is one: nothing is bound, so nothing is left to undo."""
    values, keyword_values, star_of = [], {}, {}
    for index, fact in enumerate(positional):
        values.append(Bound(fact))
        if stars and index in stars:
            star_of[id(values[-1])] = stars[index]
    for key, fact in keywords:
        if not key.isidentifier():  # call_binding's UNKNOWN_REST: keywords not known, read as `**unknown`
            values.append(Bound(None))
            star_of[id(values[-1])] = "**"
            starred = True
            continue
        keyword_values[key] = Bound(fact)
    yield CallArgs(values, keyword_values, starred, star_of)
