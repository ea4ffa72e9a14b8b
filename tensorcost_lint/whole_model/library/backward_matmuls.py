"""Ops whose forward records no site (0 FLOPs, as FlopCounterMode counts it) but whose backward
runs a matmul FlopCounterMode counts: in training, a call of one whose operand needs a gradient
becomes a BackwardMatmul entry, costed by the totals as backward FLOPs of its module (pruned like
a site's backward when the loss never reaches its result). A call whose operand or result shape
the run does not know is listed as not followed, so the total says it is partial rather than
silently short.

`torch.linalg.solve_triangular(A, B)`: autograd's backward solves for B's gradient (no FLOPs
counted) and, when A needs a gradient, forms A's as the solved gradient against the solution
(`-G_B @ X^H` for `left=True`, `-X^H @ G_B` for `left=False`): one bmm (mm without a batch) of
2·n·n·m FLOPs per matrix of the broadcast batch, where A is (*, n, n) and X (*, n, m) or
(*, m, n). Either way that is 2·n FLOPs per element of the solution X, which is what is recorded:
X's dims and n. B needing a gradient alone costs nothing (FlopCounterMode, torch 2.13)."""

from __future__ import annotations

import libcst as cst

from shape_annotations import ShapeError, contains_unknown, evaluate_dim, free_names, render_dim

from ...analysis import shape_ops
from ...analysis.facts import TensorFact
from ..values.objects import BackwardMatmul

_MATRIX = 2
# op -> (position, keyword) of the operand whose gradient runs the matmul
OPS = {"torch.linalg.solve_triangular": (0, "input")}
_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in OPS)  # a cheap look before resolving an attribute


def observe(run, interp, node, fact) -> None:
    """After a call is evaluated (its operands' facts in `run.storage.seen`): in training, a call
    of an op of OPS whose operand needs a gradient is recorded, or listed as not followed when a
    shape it needs is not known. An operand whose fact is unknown may need one."""
    if run.mode != "training" or run.no_grad or run.building or not isinstance(node, cst.Call):
        return
    if fact is not None and not (type(fact) is TensorFact and run.needs_grad(fact)):
        return  # the result needs no gradient: neither operand does
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value not in _NAMES:
        return  # a bare name may be an alias (`from torch.linalg import solve_triangular as solve`)
    name = interp.ctx.settings.imports.resolve(func)
    if name not in OPS:
        return
    operand = run.storage.seen.get(id(_argument(node, *OPS[name])))
    if type(operand) is TensorFact and not run.needs_grad(operand):
        return
    factors = _factors(operand, fact)
    if factors is None:
        run.not_followed(interp.ctx, node, f"the backward of `{name}` runs a matmul (the operand's gradient) "
                                           "over shapes that are not known")
        return
    line, column, _, _ = interp.ctx.position(node)
    entry = BackwardMatmul(run.module, (interp.ctx.settings.path, line, column), interp.ctx.code(node), factors)
    run.add(entry)
    run.grad_flow.output(entry, fact)  # costed only while the backward can reach the solution


def _argument(node: cst.Call, position: int, keyword: str):
    positional = [arg.value for arg in node.args if arg.keyword is None and arg.star == ""]
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    if any(arg.star for arg in node.args[:position + 1]):
        return None  # `*args`: which tensor is the operand is not known
    return positional[position] if len(positional) > position else None


def _factors(operand, solution) -> tuple | None:
    """X's dims and n (A's last dim), whose product times 2 is the FLOPs; None when one is unknown."""
    if type(operand) is not TensorFact or type(solution) is not TensorFact:
        return None
    shapes = (operand.shape, solution.shape)
    if any(shape is None or len(shape) < _MATRIX or shape_ops.has_group(shape) for shape in shapes):
        return None
    factors = (*solution.shape, operand.shape[-1])
    return None if any(contains_unknown(dim) for dim in factors) else factors


def backward_flops(entry: BackwardMatmul, sizes: dict) -> tuple[int | None, str | None]:
    """(FLOPs of one execution's backward matmul, None), or (None, why) when a dim is not sized."""
    flops, missing = 2, []
    for dim in entry.factors:
        try:
            value = evaluate_dim(dim, sizes)
        except ShapeError as error:
            return None, error.message
        if value is None:
            missing.extend(n for n in sorted(free_names(dim)) or [render_dim(dim)] if n not in missing)
        else:
            flops *= value
    if missing:
        return None, (f"unbound dims: {', '.join(missing)} (declare sizes in tensorcost.yaml `dims`, "
                      "`--dim NAME=SIZE` or a `# tensorcost: dims` pragma)")
    return flops, None
