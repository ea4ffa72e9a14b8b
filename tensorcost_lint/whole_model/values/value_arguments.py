"""Calling with values already computed. The interpreter's call protocol reads arguments as
expressions (`CallArgs` of CST nodes, each evaluated by the callee's reading), so a call whose
arguments are values — a partial's bound arguments, `filter`'s function applied to each item, a
choice of callees fed the same arguments, an autograd function's `apply` — binds each value to a
name in the caller's environment and passes the names. The names are unique to each binding (a
choice of callees may call a partial at the same node, each binding its own values) and removed
when the call returns; evaluating a name reads the value, so nothing is evaluated twice."""

from __future__ import annotations

import itertools
from contextlib import contextmanager

import libcst as cst

from ...analysis.arguments import CallArgs

PREFIX = "tensorcost_value_"  # no model code names its variables so
_BINDINGS = itertools.count()


@contextmanager
def value_arguments(interp, positional=(), keywords=(), starred: bool = False, stars=None):
    """CallArgs reading `positional` (facts) and `keywords` ((key, fact) pairs) through names bound
    for the duration of the call. `stars` maps a positional index to `*`/`**` (an evaluated
    sequence the callee splices again)."""
    env = interp.env
    prefix = f"{PREFIX}{next(_BINDINGS)}_"
    names, keyword_names, star_of = [], {}, {}
    for index, fact in enumerate(positional):
        env[f"{prefix}{index}"] = fact
        names.append(cst.Name(f"{prefix}{index}"))
        if stars and index in stars:
            star_of[id(names[-1])] = stars[index]
    for key, fact in keywords:
        if not key.isidentifier():  # call_binding's UNKNOWN_REST: keywords not known, read as `**unknown`
            env[f"{prefix}rest"] = None
            names.append(cst.Name(f"{prefix}rest"))
            star_of[id(names[-1])] = "**"
            starred = True
            continue
        env[f"{prefix}{key}"] = fact
        keyword_names[key] = cst.Name(f"{prefix}{key}")
    try:
        yield CallArgs(names, keyword_names, starred, star_of)
    finally:
        # the names bound here (not a scan of the env: a generated forward binds thousands)
        for name in [*names, *keyword_names.values()]:
            env.pop(name.value, None)
