"""Gradient modes as values: `torch.no_grad()`, `torch.enable_grad()`, `torch.inference_mode()`,
`torch.set_grad_enabled(flag)` and `contextlib.nullcontext()` are objects a `with` enters, however the
code reached them (`ctx = nullcontext() if i >= k else torch.no_grad()` / `with ctx:`). Inside a
block that disables gradients nothing computed needs one — FlopCounterMode sees no backward of it —
and `enable_grad` turns them back on inside a `@torch.no_grad()` function. A mode the run cannot
decide (an undecided choice between two, a flag of unknown value) leaves the block's backward
unknown: the block runs with gradients as they were, and the total says it is partial."""

from __future__ import annotations

from contextlib import contextmanager

from .objects import BoolFact

UNDECIDED_REASON = "whether gradients are enabled in this block is not decided"


class GradMode:
    """A context manager that sets autograd's mode for its block: `enabled` True or False, None for
    one that leaves it as it was (`nullcontext()`)."""

    __slots__ = ("enabled",)

    def __init__(self, enabled: bool | None) -> None:
        self.enabled = enabled


class UndecidedGradMode:
    """One of several grad modes, which one the run cannot tell."""

    __slots__ = ("condition",)

    def __init__(self, condition: str) -> None:
        self.condition = condition


def _fixed(enabled):
    def make(interp, args):
        for value in [*args.positional, *args.keywords.values()]:
            interp.eval(value)
        return GradMode(enabled)
    return make


def _inference_mode(interp, args):
    """`torch.inference_mode(mode=True)`: disables gradients unless its flag is False."""
    flag = args.positional[0] if args.positional else args.keywords.get("mode")
    return GradMode(False) if flag is None else _from_flag(interp.eval(flag), invert=True)


def _set_grad_enabled(interp, args):
    flag = args.positional[0] if args.positional else args.keywords.get("mode")
    return UndecidedGradMode("torch.set_grad_enabled") if flag is None else _from_flag(interp.eval(flag))


def _from_flag(value, invert: bool = False):
    if type(value) is BoolFact:
        return GradMode(not value.value if invert else value.value)
    return UndecidedGradMode("torch.set_grad_enabled" if not invert else "torch.inference_mode")


FUNCTIONS = {
    "torch.no_grad": _fixed(False),
    "torch.autograd.no_grad": _fixed(False),
    "torch.autograd.grad_mode.no_grad": _fixed(False),
    "torch.enable_grad": _fixed(True),
    "torch.autograd.enable_grad": _fixed(True),
    "torch.autograd.grad_mode.enable_grad": _fixed(True),
    "torch.inference_mode": _inference_mode,
    "torch.autograd.grad_mode.inference_mode": _inference_mode,
    "torch.set_grad_enabled": _set_grad_enabled,
    "torch.autograd.set_grad_enabled": _set_grad_enabled,
    "torch.autograd.grad_mode.set_grad_enabled": _set_grad_enabled,
    "contextlib.nullcontext": _fixed(None),
}


def choose(condition: str, body, orelse):
    """The value of `body if <undecided> else orelse` when a side is a grad mode: the mode both agree
    on, else an undecided one."""
    if type(body) is GradMode and type(orelse) is GradMode and body.enabled == orelse.enabled:
        return body
    return UndecidedGradMode(condition)


def is_grad_mode(value) -> bool:
    return type(value) in (GradMode, UndecidedGradMode)


@contextmanager
def entered(run, ctx, items):
    """Run a `with` block under the grad modes of its items (`(node, value)` pairs), innermost last."""
    saved = run.no_grad
    try:
        for node, value in items:
            if type(value) is UndecidedGradMode:
                if run.mode == "training" and not run.no_grad:
                    run.not_followed(ctx, node, f"{UNDECIDED_REASON} ({value.condition})")
            elif type(value) is GradMode and value.enabled is not None:
                run.no_grad = 0 if value.enabled else 1
        yield
    finally:
        run.no_grad = saved
