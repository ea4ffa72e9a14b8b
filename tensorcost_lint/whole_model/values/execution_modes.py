"""Execution modes a `with` enters, as values: `torch.no_grad()`, `torch.enable_grad()`,
`torch.inference_mode()`, `torch.set_grad_enabled(flag)` and `contextlib.nullcontext()` set autograd's
mode however the code reached them (`ctx = nullcontext() if i >= k else torch.no_grad()` / `with
ctx:`); `torch.autocast(...)` (and `torch.amp`'s, `torch.cuda.amp`'s) says whether autocast is on.
Inside a block that disables gradients nothing computed needs one — FlopCounterMode sees no
backward of it — and `enable_grad` turns them back on inside a `@torch.no_grad()` function. A grad
mode the run cannot decide (an undecided choice between two, a flag of unknown value) leaves the
block's backward unknown: the block runs with gradients as they were, and the total says it is
partial. The run models eager execution with no autocast around the entry (FlopCounterMode's), so
`torch.is_autocast_enabled()` is whether a `with torch.autocast(...)` the run entered is on."""

from __future__ import annotations

from contextlib import contextmanager

from ...analysis.facts import StringFact
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


class AutocastMode:
    """`torch.autocast(device_type, ...)`: its device ("cuda", "cpu"; None unknown) and whether it is
    on (True, False for `enabled=False`, None for a flag of unknown value)."""

    __slots__ = ("device", "enabled")

    def __init__(self, device: str | None, enabled: bool | None) -> None:
        self.device, self.enabled = device, enabled


def _autocast(device_of_name):
    """`torch.autocast(device_type, dtype, enabled)`; `torch.cuda.amp.autocast(enabled, dtype)` and
    `torch.cpu.amp.autocast(...)` name their device."""

    def make(interp, args):
        values = {id(value): interp.eval(value) for value in [*args.positional, *args.keywords.values()]}
        device_node = args.get(0, "device_type") if device_of_name is None else None
        flag = args.keywords.get("enabled")
        if flag is None and args.positional[2 if device_of_name is None else 0:]:
            flag = args.positional[2 if device_of_name is None else 0]
        device = device_of_name
        if device_node is not None:
            device = values[id(device_node)].value if type(values[id(device_node)]) is StringFact else None
        enabled = True if flag is None else values[id(flag)].value if type(values[id(flag)]) is BoolFact else None
        return AutocastMode(device, enabled)

    return make


def _autocast_enabled(interp, args):
    """`torch.is_autocast_enabled(device_type="cuda")`: whether the innermost autocast the run entered
    for that device is on (none: off, as in the eager run FlopCounterMode counts)."""
    node = args.get(0, "device_type")
    value = interp.eval(node) if node is not None else StringFact("cuda")
    device = value.value if type(value) is StringFact else None
    for mode in reversed(interp.run.autocast_modes):
        if device is not None and mode.device is not None and mode.device != device:
            continue
        return None if device is None or mode.device is None or mode.enabled is None else BoolFact(mode.enabled)
    return BoolFact(False)


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
    **dict.fromkeys(("torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"), _autocast(None)),
    "torch.cuda.amp.autocast": _autocast("cuda"),
    "torch.cpu.amp.autocast": _autocast("cpu"),
    "torch.is_autocast_enabled": _autocast_enabled,
}


def choose(condition: str, body, orelse):
    """The value of `body if <undecided> else orelse` when a side is a grad mode: the mode both agree
    on, else an undecided one."""
    if type(body) is GradMode and type(orelse) is GradMode and body.enabled == orelse.enabled:
        return body
    return UndecidedGradMode(condition)


def is_grad_mode(value) -> bool:
    return type(value) in (GradMode, UndecidedGradMode)


def is_mode(value) -> bool:
    return type(value) in (GradMode, UndecidedGradMode, AutocastMode)


@contextmanager
def entered(run, ctx, items):
    """Run a `with` block under the modes of its items (`(node, value)` pairs), innermost last."""
    saved, depth = run.no_grad, len(run.autocast_modes)
    try:
        for node, value in items:
            if type(value) is AutocastMode:
                run.autocast_modes.append(value)
            elif type(value) is UndecidedGradMode:
                if run.mode == "training":
                    run.not_followed(ctx, node, f"{UNDECIDED_REASON} ({value.condition})")
            elif type(value) is GradMode and value.enabled is not None:
                run.no_grad = 0 if value.enabled else 1
        yield
    finally:
        run.no_grad = saved
        del run.autocast_modes[depth:]
