"""A configured model whose memory does not fit its device (TCL504, Contract 9), as a fact without
words (the rule owns the words), and how `check` finds it in a model's totals."""

from __future__ import annotations

from dataclasses import dataclass

# the memory figures a model outcome of `check` carries in its totals (exact ints or None)
MEMORY_TOTALS = ("memory_peak", "memory_peak_lower_bound", "memory_parameters", "memory_gradients",
                 "memory_optimizer_states", "memory_activations")


@dataclass(frozen=True)
class ModelOverDeviceMemory:
    """The model's `memory.peak` (or, while the peak is not known, its `peak_lower_bound`: what the
    step certainly holds at one moment) passes the hardware profile's `memory_bytes`."""

    model: str
    mode: str
    hardware: str
    memory_bytes: int
    needed: int
    exact: bool  # needed is the peak (True) or its lower bound (False)
    parts: tuple  # (category, bytes) of the categories known, in Contract 9's order
    phase: str | None = None  # where the peak is (forward, backward, optimizer); None with the lower bound


def memory_totals_of(memory: dict | None) -> dict:
    """totals.memory (report JSON) -> the MEMORY_TOTALS entries of a `check` outcome."""
    memory = memory or {}
    return {"memory_peak": memory.get("peak"), "memory_peak_lower_bound": memory.get("peak_lower_bound"),
            "memory_peak_phase": memory.get("peak_phase"),
            **{f"memory_{name}": memory.get(name)
               for name in ("parameters", "gradients", "optimizer_states", "activations")}}


def over_device_memory(name: str, mode: str, totals: dict, hardware_id: str,
                       memory_bytes: int | None) -> ModelOverDeviceMemory | None:
    if memory_bytes is None:
        return None
    peak, bound = totals.get("memory_peak"), totals.get("memory_peak_lower_bound")
    needed, exact = (peak, True) if peak is not None else (bound, False)
    if needed is None or needed <= memory_bytes:
        return None
    parts = tuple((key[len("memory_"):], totals[key]) for key in MEMORY_TOTALS[2:] if totals.get(key) is not None)
    return ModelOverDeviceMemory(name, mode, hardware_id, memory_bytes, needed, exact, parts,
                                 totals.get("memory_peak_phase") if exact else None)
