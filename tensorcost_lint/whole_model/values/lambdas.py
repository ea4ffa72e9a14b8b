"""Lambda expressions in model code: `lambda: create_causal_mask(**mask_kwargs)` is a function of the
names around it, called like a def, and `map(lambda t: rearrange(t, ...), qkv)` over a known
sequence evaluates the body once per item.

Apart from python_values.py because a lambda is a function value built from an expression: it
needs one def per lambda node (run.lambdas), so memo and recursion keys stay those of one function."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import SequenceFact
from ...analysis.interpreter import UNHANDLED
from .objects import FunctionRef


def mapped(interp, args):
    """`map(lambda t: rearrange(t, ...), qkv)` over a known sequence: the body once per item."""
    function, sequence = args.get(0), args.get(1)
    name = _lambda_parameter(function)
    if name is None or len(args.positional) != 2 or args.keywords or args.starred:
        return UNHANDLED
    items = interp.eval(sequence)
    if type(items) is not SequenceFact:
        interp.with_env({**interp.env, name: None}).eval(function.body)  # its sites, unresolved
        return None
    return SequenceFact(tuple(interp.with_env({**interp.env, name: item}).eval(function.body) for item in items.items))


def lambda_function(interp, node: cst.Lambda):
    """`lambda: create_causal_mask(**mask_kwargs)`: a function of the names around it, called like a
    def (one def per lambda node, so memo and recursion keys stay those of one function)."""
    definition = interp.run.lambdas.get(node)
    if definition is None:
        definition = cst.FunctionDef(cst.Name("lambda_"), node.params, cst.SimpleStatementSuite([cst.Return(node.body)]))
        interp.run.lambdas[node] = definition
    return FunctionRef(interp.source, definition, closure=interp.env)


def _lambda_parameter(node):
    if not isinstance(node, cst.Lambda):
        return None
    params = node.params
    if len(params.params) != 1 or params.posonly_params or params.kwonly_params or params.star_arg \
            not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg is not None:
        return None
    return params.params[0].name.value
