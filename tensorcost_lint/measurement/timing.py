"""Timing one operation: warm-up, repeats, and the statistics evidence and comparisons need.

Each sample times one call, after `before()` ran outside the timed region (switching to fresh
operands, or evicting caches, in `measure`). A sample set is cut short by a time budget, never
below `min_repeats`: a slow operation gets fewer samples rather than an unbounded run.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    samples: tuple[float, ...]  # seconds, one per timed repeat
    warmup: int

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """Interquartile range / median: how noisy the machine was while we measured. Not the
        full range, which one run descheduled by a neighbour on a shared machine would dominate."""
        if len(self.samples) < 2 or self.median <= 0:
            return 0.0
        low, _, high = statistics.quantiles(self.samples, n=4, method="inclusive")
        return (high - low) / self.median

    @property
    def repeats(self) -> int:
        return len(self.samples)

    def scaled(self, factor: int) -> "Timing":
        """The time of `factor` identical executions, from samples of one."""
        return Timing(tuple(s * factor for s in self.samples), self.warmup)


def time_calls(call, *, warmup: int = 2, repeats: int = 10, min_repeats: int = 3,
               budget_seconds: float = 2.0, before=None, clock=None) -> Timing:
    """Time `call()` `repeats` times (fewer when over budget, at least `min_repeats`).

    `clock` is a pair (start(), stop() -> seconds) for devices with their own timers (CUDA events);
    the default is the wall clock around a synchronous call.
    """
    start, stop = clock or _wall_clock()
    for _ in range(warmup):
        if before is not None:
            before()
        call()
    samples: list[float] = []
    spent_from = time.perf_counter()
    while len(samples) < repeats:
        if before is not None:
            before()
        start()
        call()
        samples.append(stop())
        over_budget = time.perf_counter() - spent_from > budget_seconds
        if over_budget and len(samples) >= min_repeats:
            break
    return Timing(tuple(samples), warmup)


def _wall_clock():
    state = {}

    def start() -> None:
        state["t"] = time.perf_counter_ns()

    def stop() -> float:
        return (time.perf_counter_ns() - state["t"]) * 1e-9

    return start, stop


def cuda_event_clock(torch, device):
    """CUDA events around the kernels: the host returns before the GPU finishes, so the wall clock
    would time the launch, not the work."""
    begin = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    def start() -> None:
        torch.cuda.synchronize(device)
        begin.record()

    def stop() -> float:
        end.record()
        end.synchronize()
        return begin.elapsed_time(end) * 1e-3  # milliseconds -> seconds

    return start, stop
