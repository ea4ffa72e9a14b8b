"""What two paths of a whole-model flow leave: the env after an undecided `if` or a loop that may not
run, with gradients and callables joined. Shared by the branches (model_flow.py) and the loops
(flow_loops.py)."""

from __future__ import annotations

from ...analysis.function_flow import merge_envs
from ..values import optional_values
from ..python import python_values
from ..python.gradient_flow import union
from .model_evaluator import GRAD_TAINT
from ..values.objects import CallableChoice, ClassRef, FunctionRef


def merge_sides(run, a: dict, b: dict, sizes, condition: str | None = None) -> dict:
    """What two paths leave (merge_envs); a value needs a gradient when it does on either path, as
    the dearer side is the one costed (a norm that upcasts under an undecided dtype check still
    passes its input's gradient on). Two different functions a name holds after an undecided
    `if` are a CallableChoice: calling it runs each (`mask_fn = and_masks(mask_fn, extra)` under
    `if extra is not None`), so the call's result is what both agree on, never unknown by fiat."""
    merged = merge_envs(a, b, sizes)
    for name in a.keys() & b.keys():
        if merged.get(name) is None:
            merged[name] = optional_values.join_optional(a[name], b[name])
    if condition is not None:
        for name in a.keys() & b.keys():
            if merged.get(name) is None and _callable_value(a[name]) and _callable_value(b[name]):
                sides = tuple(side for value in (a[name], b[name])
                              for side in (value.sides if type(value) is CallableChoice else (value,)))
                merged[name] = CallableChoice(condition, sides)
    for name, value in merged.items():
        if name in a and name in b and (run.needs_grad(a[name]) or run.needs_grad(b[name])):
            sides = [side for side in (a[name], b[name]) if run.needs_grad(side)]
            if value is not a[name]:
                run.mark(value, sides, merge=True)  # the joined value is either side's
            elif value is not b[name]:
                run.grad_flow.merge(value, sides)
    for key in {*a, *b}:
        if key.startswith(GRAD_TAINT) and (a.get(key) or b.get(key)):
            merged[key] = union(a.get(key), b.get(key))
    return merged


def _callable_value(value) -> bool:
    return type(value) in (FunctionRef, ClassRef, CallableChoice, python_values.Partial)
