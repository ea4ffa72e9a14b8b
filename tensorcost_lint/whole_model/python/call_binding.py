"""Arguments of calls the whole-model run follows: `*args` and `**kwargs` spliced when their
values are known, extra keywords bound to a callee's `**kwargs`, and torch functions called
through a variable (`self.act = nn.functional.gelu`)."""

from __future__ import annotations

import libcst as cst

from ...analysis import call_sites, op_table
from ...analysis.arguments import CallArgs
from ...analysis.facts import SequenceFact
from ...analysis.site_registry import FUNCTIONS as SITE_FUNCTIONS
from ..values.library_objects import MappingFact, RecordFact
from ..values.mapping_keys import only_string_keys
from ..values.objects import NONE, ModuleList, Sequential
from .gradient_flow import flow_into

UNKNOWN_REST = "\0unknown"  # a keyword key: `**value` whose items are not known


class Splice:
    """`f(*items)` where how many arguments `items` makes is not known: every parameter from its
    position on is unknown. `collection`: a repeated collection (`[Block() for _ in range(n)]`, one
    object standing for n copies), which a callee's `*args` receives whole (as Python binds the tuple
    of its items); None for anything else."""

    __slots__ = ("collection",)

    def __init__(self, collection) -> None:
        self.collection = collection


def splice_free(positional) -> list:
    """`positional` with an unknown splice read as one unknown argument (for callers that do not
    bind parameters themselves)."""
    return [None if type(value) is Splice else value for value in positional]


def _eval_noting_gradient(interp, value, position, unknown_with_grad):
    """`value`'s fact; with `unknown_with_grad` (a set), `position` is added to it when the fact is
    unknown yet computed from a tensor that needs a gradient (`q` after an undecided rotary branch):
    a parameter's shape annotation then declares a tensor that needs one too."""
    if unknown_with_grad is None:
        return interp.eval(value)
    frames = interp.run.grad_frames
    frames.append(None)
    try:
        fact = interp.eval(value)
    finally:
        flowed = frames.pop()
    flow_into(frames, flowed)  # the enclosing expression is computed from it as before
    if flowed and fact is None:
        unknown_with_grad.add(position)
    return fact


def spliced_arguments(interp, args: CallArgs, plain):
    """A call's arguments with each `*seq` and `**mapping` spliced where it stands, as Python binds
    them, when each is a plain name (`plain(node)`: reading it records nothing) of a known value:
    (positional, keywords), each argument ("node", its expression) or ("value", a spliced item's
    fact). None when one is not known: which parameter each argument binds is then not known."""
    positional, keywords = [], {}
    for value in args.positional:
        star = args.stars.get(id(value))
        if star is None:
            positional.append(("node", value))
            continue
        if not plain(value):
            return None
        fact = interp.eval(value)
        if star == "*" and type(fact) is SequenceFact:
            positional.extend(("value", item) for item in fact.items)
        elif star == "**" and type(fact) is MappingFact and only_string_keys(fact) \
                and all(key.isidentifier() for key, _ in fact.items):  # (UNKNOWN_REST is none)
            keywords.update((key, ("value", item)) for key, item in fact.items)
        else:
            return None
    keywords.update((name, ("node", value)) for name, value in args.keywords.items())
    return positional, keywords


def evaluate_arguments(interp, args: CallArgs, unknown_with_grad: set | None = None, splices: bool = False):
    """(positional facts, keyword facts). `*seq` of a known sequence adds its items; `**kw` of a
    known mapping adds its items; an unknown `**kw` adds no keyword a parameter takes (a keyword it
    might carry is unknown to the callee anyway: its parameter takes its default), but marks the
    rest unknown (UNKNOWN_REST), so a callee's `**kwargs` is not read as a mapping known whole.
    With `unknown_with_grad`, the positions (index or keyword) of unknown arguments computed from
    a tensor that needs a gradient are added to it. `splices`: a `*seq` of unknown length is a Splice
    (for a callee whose parameters the run binds, function_runs._bind), else one unknown argument."""
    positional, keywords = [], {}
    for value in args.positional:
        star = args.stars.get(id(value))
        fact = _eval_noting_gradient(interp, value, len(positional), unknown_with_grad if star is None else None)
        if star == "**":
            if type(fact) is MappingFact and only_string_keys(fact):
                keywords.update(fact.items)
            elif type(fact) is RecordFact and fact.model_output:
                # a ModelOutput is a dict of the fields set (not None): `Output(**outputs, extra=...)`
                for name, field in fact.fields:
                    if field is None:
                        keywords[UNKNOWN_REST] = None  # may be None (no key) or set
                    elif field is not NONE:
                        keywords[name] = field
            else:
                keywords[UNKNOWN_REST] = None
            continue
        if star == "*":
            items = interp.listed_items(fact) if fact is not None else None  # a list grown by appends too
            if items is not None:
                positional.extend(items)
            else:  # how many arguments it makes is not known; a repeated collection stays whole
                positional.append(Splice(fact if type(fact) in _REPEATED else None))
        else:
            positional.append(fact)
    for name, value in args.keywords.items():
        keywords[name] = _eval_noting_gradient(interp, value, name, unknown_with_grad)
    return (positional if splices else splice_free(positional)), keywords


def bind_extra_keywords(env: dict, params: cst.Parameters, keywords: dict) -> None:
    """`**kwargs` receives the keywords no parameter takes, as a known mapping."""
    if not isinstance(params.star_kwarg, cst.Param):
        return
    named = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    env[params.star_kwarg.name.value] = MappingFact(tuple((k, v) for k, v in keywords.items() if k not in named))


def call_torch_function(interp, node: cst.Call, name: str, args: CallArgs):
    """A torch function held in a variable, called: the site or transfer its name has."""
    if name in SITE_FUNCTIONS:
        return call_sites.record_function_site(interp, node, name, args)
    transfer = op_table.FUNCTIONS.get(name)
    if transfer is not None:
        return transfer(interp, args)
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)
    return None


_REPEATED = (ModuleList, Sequential)  # a collection the run holds as one item standing for n copies
