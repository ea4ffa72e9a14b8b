"""Ops whose forward records no site (0 FLOPs, as FlopCounterMode counts it) but whose backward
runs a matmul FlopCounterMode counts, which the run does not cost yet: in training, a call of one
whose operand needs a gradient is listed as not followed, so the total says it is partial rather
than silently short.

`torch.linalg.solve_triangular(A, B)`: autograd's backward solves for B's gradient (no FLOPs
counted) and, when A needs a gradient, forms A's as the solved gradient against the solution
(`-G_B @ X^H`): 2·n·n·k FLOPs per matrix of the batch."""

from __future__ import annotations

from .known_values import is_plain

# op -> (position, keyword) of the operand whose gradient runs the matmul
OPS = {"torch.linalg.solve_triangular": (0, "input")}


def note(interp, node, args, name: str) -> None:
    """In training, list the call when its operand may need a gradient. A written operand other
    than a plain name is not evaluated here (its sites would be recorded twice): it may need one."""
    run = interp.run
    if run.mode != "training" or run.no_grad:
        return
    position, keyword = OPS[name]
    operand = args.get(position, keyword)
    if operand is not None and is_plain(operand) and not run.needs_grad(interp.eval(operand)):
        return
    run.not_followed(interp.ctx, node, f"the backward of `{name}` runs a matmul (the operand's gradient) that "
                                       "tensorcost does not cost yet")
