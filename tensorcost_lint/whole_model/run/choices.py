"""Values an undecided branch leaves more than one of, kept as choices so each side is costed:
- a function whose undecided branches return different modules (TransformerLens' `MLPFactory.
  create_mlp(cfg)` returning MoE, GatedMLP or MLP) returns a ModuleChoice of them;
- a conditional expression between two classes (`Attention if n_kv is None else
  GroupedQueryAttention`) is a CallableChoice; calling it builds each side (a Choice of their
  costs, if building costs anything) and yields a ModuleChoice of what they built.

Nothing here guesses: a side's cost is what that side's code costs with the dims it can read, and
the totals span [min, max] over the sides (Contract 7's `flops_range`)."""

from __future__ import annotations

from contextlib import contextmanager

import libcst as cst

from ...analysis.arguments import CallArgs
from ...analysis.facts import SelfFact, merge_facts
from ..values.objects import CallableChoice, Choice
from ..python.python_values import ModuleChoice, call_value, is_module_value

_SYNTHETIC = "tensorcost_choice_"  # env names the once-evaluated arguments are read through
MAX_SIDES = 16


def module_choice(values: list, condition: str):
    """The ModuleChoice of the distinct modules among `values` (a function's returns, what the
    sides of a CallableChoice built), or None when they are not all modules or are one module."""
    distinct = []
    for value in values:
        if not is_module_value(value):
            return None
        sides = value.sides if type(value) is ModuleChoice else (value,)
        distinct.extend(side for side in sides if all(side is not seen for seen in distinct))
    if len(distinct) < 2 or len(distinct) > MAX_SIDES:
        return None
    return ModuleChoice(condition, tuple(distinct))


@contextmanager
def _evaluated_once(interp, node, args):
    """The call's arguments evaluated once, as CallArgs of names bound to their facts, so each
    side reads the same facts and no argument's sites are recorded twice."""
    env = interp.env
    prefix = f"{_SYNTHETIC}{id(node)}_"
    positional, keywords, stars = [], {}, {}
    for index, value in enumerate(args.positional):
        env[f"{prefix}{index}"] = interp.eval(value)
        positional.append(cst.Name(f"{prefix}{index}"))
        if id(value) in args.stars:  # `f(*indices)`: each side splices the same evaluated sequence
            stars[id(positional[-1])] = args.stars[id(value)]
    for key, value in args.keywords.items():
        env[f"{prefix}{key}"] = interp.eval(value)
        keywords[key] = cst.Name(f"{prefix}{key}")
    try:
        yield CallArgs(positional, keywords, args.starred, stars)
    finally:
        for key in [k for k in env if k.startswith(prefix)]:
            del env[key]


def _each_side(interp, condition: str, callees, call):
    """`call(callee)` for each side, its entries collected apart: a Choice of the sides' costs."""
    run = interp.run
    sides, results = tuple([] for _ in callees), []
    for side, callee in zip(sides, callees):
        with run.collecting(side):
            results.append(call(callee))
    if any(sides):
        run.add(Choice(condition, sides))
    run.note_undecided(condition)
    return results


def _agreed(interp, results):
    first = results[0]
    for other in results[1:]:
        first = first if other is first else merge_facts(first, other, interp.ctx.settings.sizes)
    return first


def call_callable_choice(interp, node, choice: CallableChoice, args):
    """Each side built with the same arguments; what they built is a ModuleChoice."""
    with _evaluated_once(interp, node, args) as once:
        results = _each_side(interp, choice.condition, choice.sides,
                             lambda callee: call_value(interp, node, callee, once))
    if all(is_module_value(result) for result in results):
        return module_choice(results, choice.condition) or results[0]
    return _agreed(interp, results)


def call_module_choice(interp, node, choice: ModuleChoice, args):
    """Each side module applied to the same arguments (a module of the tree with all of them, a
    library module with its one input); the value the sides agree on."""
    run = interp.run
    with _evaluated_once(interp, node, args) as once:
        single = len(once.positional) == 1 and not once.keywords and not once.starred

        def apply(module):
            if type(module) is SelfFact and run.instance(module) is not None:
                return run.call_instance(interp, node, module, once)
            if single:
                return run.apply_module(interp, node, module, interp.eval(once.positional[0]))
            run.not_followed(interp.ctx, node, f"a module chosen by `{choice.condition}`, called with more "
                                               "than one input")
            return None

        results = _each_side(interp, choice.condition, choice.sides, apply)
    return _agreed(interp, results)
