"""Which library op a call runs, for the saved-tensor table (memory_activations), however the code
reached it: by its dotted name (`torch.tanh(x)`), as a value (`self.act = nn.functional.gelu`;
`torch.tanh` itself evaluates to a TorchFunction), through `functools.partial` (transformers'
GELUTanh holds `partial(nn.functional.gelu, approximate="tanh")`, whose bound arguments are the op's
too), or as `super().forward(x)` of a subclass of a torch module (a scaled `nn.Embedding` runs the
embedding it was built as). The run follows all of these for FLOPs; what the op saves must follow
the same callee, or an op that saves would silently count as saving nothing."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..values.library_objects import SuperRef, TorchFunction
from ..python.python_values import Partial


@dataclass(frozen=True)
class Callee:
    """The callee fact to dispatch on (a module, an embedding; None for a function), the canonical
    name of a library function (or None), and the arguments bound before the call's own (a partial's)."""

    fact: object
    name: str | None
    bound: tuple = ()  # facts, before the call's positional arguments
    bound_keywords: tuple = ()  # ((name, fact), ...), under the call's keywords


def callee_of(run, interp, node: cst.Call) -> Callee:
    facts = run.storage.seen
    fact = facts.get(id(node.func))
    if type(fact) is TorchFunction:
        return Callee(None, fact.name)
    if type(fact) is Partial and fact.name is not None:
        return Callee(None, fact.name, fact.positional, fact.keywords)
    if fact is None and _is_super_forward(node.func):
        receiver = facts.get(id(node.func.value))
        instance = run.instance(receiver.self_fact) if type(receiver) is SuperRef else None
        # no `forward` up the tree's own chain: torch's module the subclass was built as runs
        if instance is not None and instance.contents is not None and run.super_method(receiver, "forward") is None:
            return Callee(instance.contents, None)
    return Callee(fact, interp.ctx.settings.imports.resolve(node.func))


def _is_super_forward(func) -> bool:
    return isinstance(func, cst.Attribute) and func.attr.value == "forward" and isinstance(func.value, cst.Call) \
        and isinstance(func.value.func, cst.Name) and func.value.func.value == "super" and not func.value.args
