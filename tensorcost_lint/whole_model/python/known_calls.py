"""Calls the run makes of values it holds, rather than of names in the source:
`functools.partial(block, **kwargs)` (a Partial, as python_values makes one), a call of what a call
returns (`maybe(self.norm)(q)`), a callee called with facts already evaluated (`filter(f, seq)`), and
`callable(x)` of a known value.

Apart from known_builtins.py because these hand control back into the model's own code
(python_values.call_value, the run's module calls) instead of computing a value from known ones."""

from __future__ import annotations

import libcst as cst

from ...analysis.arguments import CallArgs
from ...analysis.facts import DimFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, StringFact, TensorFact
from ...analysis.interpreter import UNHANDLED
from . import attribute_presence, call_binding, python_values
from .known_values import is_plain
from ..values.library_objects import IntFact, MappingFact, TorchFunction
from ..values.objects import NONE, BoolFact, ClassRef, FunctionRef


_SYNTHETIC = "tensorcost_known_"  # env names facts are passed to a callee through


_NOT_CALLABLE = (BoolFact, IntFact, DimFact, ScalarFact, StringFact, SequenceFact, MappingFact, TensorFact)


def callable_value(run, value):
    """`callable(x)` when known."""
    if value is NONE or type(value) in _NOT_CALLABLE:
        return False
    if type(value) in (FunctionRef, ClassRef, TorchFunction, python_values.Partial, ModuleFact) or \
            python_values.is_module_value(value):
        return True
    return None


def call_with_facts(interp, func_node, callee, facts: list):
    """Call `callee` (a value) with argument facts, through env names the call reads."""
    names = []
    for index, fact in enumerate(facts):
        name = f"{_SYNTHETIC}{id(func_node)}_{index}"
        interp.env[name] = fact
        names.append(cst.Name(name))
    call = cst.Call(func=func_node, args=[cst.Arg(name) for name in names])
    try:
        return python_values.call_value(interp, call, callee, CallArgs(names, {}, False))
    finally:
        for name in names:
            interp.env.pop(name.value, None)


def partial(interp, args):
    """`functools.partial(block, **kwargs)` with a known mapping spliced, or over a module object:
    a Partial as python_values makes one; UNHANDLED for what python_values.make_partial reads."""
    if not args.positional or not is_plain(args.positional[0]):
        return UNHANDLED
    func = args.positional[0]
    name = interp.ctx.settings.imports.resolve(func)
    library = name is not None and name.startswith(("torch.", "einops."))
    callee = None if library else interp.eval(func)
    module_callee = type(callee) is SelfFact and interp.run.instance(callee) is not None
    if not args.starred and not module_callee:
        return UNHANDLED
    if args.stars.get(id(func)):
        return None
    if not library and not module_callee and type(callee) not in (FunctionRef, ClassRef, python_values.Partial):
        return None
    rest = CallArgs(args.positional[1:], args.keywords, args.starred,
                    {key: star for key, star in args.stars.items() if key != id(func)})
    if any(star == "*" for star in rest.stars.values()):
        for value in rest.positional:
            interp.eval(value)
        return None  # `partial(f, *items)`: which positions are bound is left unknown
    positional, keywords = call_binding.evaluate_arguments(interp, rest)
    return python_values.Partial(name if library else None, None if library else callee, tuple(positional),
                                 tuple(keywords.items()))


def call_of_call(interp, node: cst.Call, args):
    """`maybe(self.norm)(q)`: the inner call evaluated once, then its value called when it is one
    the run can call; otherwise the arguments walked and the result unknown."""
    callee = interp.eval(node.func)
    if type(callee) in (FunctionRef, ClassRef, python_values.Partial) or \
            type(callee) is SelfFact and interp.run.instance(callee) is not None:
        return python_values.call_value(interp, node, callee, args)
    single = len(args.positional) == 1 and not args.keywords and not args.starred
    if single and python_values.is_module_value(callee):  # `getattr(self, f"{kind}_proj")(x)`
        return interp.run.apply_module(interp, node, callee, interp.eval(args.positional[0]))
    attribute_presence.mark_handed(interp.run, [interp.eval(value) for value in [*args.positional,
                                                                                  *args.keywords.values()]])
    if callee is None or python_values.is_module_value(callee):  # its cost is unknown: say so
        interp.run.not_followed(interp.ctx, node, "the callee is the result of a call the run cannot read")
    return None
