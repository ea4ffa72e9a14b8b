"""Custom autograd functions: `class Scan(torch.autograd.Function)` with a static
`forward(ctx, ...)` (and `backward(ctx, ...)`), called as `Scan.apply(*inputs)`.

As torch runs it: `apply` calls `forward` with a fresh context object (`ctx.x = ...` and
`ctx.save_for_backward(...)` keep what the backward needs) and with grad mode off, so the ops in
`forward` record no backward of their own; their outputs need a gradient when an input does.
Autograd's backward is then the class's `backward` method, which the run does not cost yet: in
training, an `apply` whose inputs need a gradient is listed as not followed (the total says it is
partial), never costed as the forward ops' own backward nor as nothing."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ...analysis.arguments import CallArgs
from ...analysis.facts import SelfFact, SequenceFact, TensorFact
from .inheritance import find_method
from .objects import FunctionRef

_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
_SYNTHETIC = "tensorcost_apply_"  # env names the context and the inputs are passed through


@dataclass(frozen=True)
class AutogradApply:
    """`Scan.apply` as a value: the class's forward, run as torch's apply runs it."""

    forward: FunctionRef
    name: str  # the class's name, for the reason a backward is not costed


def apply_of(run, class_ref, name: str):
    """`Scan.apply` of a class subclassing torch.autograd.Function (with a forward of its own or
    its bases'), or None."""
    if name != "apply":
        return None
    imports = class_ref.source.ctx.settings.imports
    if not any(imports.resolve(base.value) in _FUNCTION_BASES for base in class_ref.node.bases):
        return None
    found = find_method(run, class_ref.source, class_ref.node, "forward")
    if found is None:
        return None
    return AutogradApply(FunctionRef(*found), class_ref.node.name.value)


def call_apply(interp, node: cst.Call, callee: AutogradApply, args):
    """`Scan.apply(a, b)`: forward(ctx, a, b) under grad mode off. `apply` takes its inputs by
    position only (a keyword is a TypeError in torch): any other call is unknown."""
    run = interp.run
    if args.keywords or args.starred:
        for value in [*args.positional, *args.keywords.values()]:
            interp.eval(value)
        return None
    facts = [interp.eval(value) for value in args.positional]
    needing = [fact for fact in facts if run.needs_grad(fact)]
    names = [f"{_SYNTHETIC}{id(node)}_{index}" for index in range(len(facts) + 1)]
    for name, fact in zip(names, [SelfFact({}), *facts]):
        interp.env[name] = fact
    run.no_grad += 1
    try:
        out = run.call_function(interp, node, callee.forward, CallArgs([cst.Name(n) for n in names], {}, False))
    finally:
        run.no_grad -= 1
        for name in names:
            interp.env.pop(name, None)
    if needing:
        for tensor in _tensors(out):
            run.mark(tensor, needing)
        run.not_followed(interp.ctx, node, f"the backward of the autograd function `{callee.name}` is its own "
                                           "`backward` method, which tensorcost does not cost yet")
    return out


def _tensors(value) -> list:
    if type(value) is TensorFact:
        return [value]
    if type(value) is SequenceFact:
        return [tensor for item in value.items for tensor in _tensors(item)]
    return []
