"""How long `measure` will take on each site, said before anything runs.

The lower bound alone cannot say it: with the shipped config the evidence is a datacenter GPU,
and on a laptop CPU a site bounded at 7 ms took 277 s. So this machine is probed first — one
small matmul (and one numpy single-loop einsum) per operand dtype, on the backend that will run
the sites — and each run is predicted at the slower of its bound and its FLOPs at the probed rate.
It is an estimate to the nearest factor of a few, not a measurement: a plain matmul's rate is the
best case, and strided batched contractions or numpy's multi-operand loops run several times
slower (the progress ETA rescales by the sites already done). Its job is to catch the sites that
would take minutes or hours, which it does by orders of magnitude.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from estimator.units import format_bytes

from .progress import duration_text
from .timing import time_calls
from .workloads import Step, Workload, step_flops

# Square matmul sizes tried in turn (the next only while a run takes under QUICK_PROBE_SECONDS):
# 384^3 is 113 MFLOP, milliseconds in a BLAS; numpy's single C loop runs ~1-5 GFLOP/s.
PROBE_SIZES = {False: (128, 384), True: (32, 64)}
QUICK_PROBE_SECONDS = 0.005


@dataclass(frozen=True)
class Forecast:
    run_seconds: float  # one timed run, all executions
    runs: int  # warm-up runs plus the timed repeats the budget allows
    footprint_bytes: int

    @property
    def site_seconds(self) -> float:
        return self.run_seconds * self.runs


class MachineRates:
    """FLOP/s this backend reaches here, probed once per (dtype, single loop) on first use."""

    def __init__(self, backend) -> None:
        self.backend = backend
        self._rates: dict = {}

    def rate(self, dtype: str | None, single_loop: bool) -> float | None:
        key = (dtype or "float32", single_loop)
        if key not in self._rates:
            self._rates[key] = self._probe(*key)
            if self._rates[key] is None and key[0] != "float32":
                self._rates[key] = self.rate("float32", single_loop)
        return self._rates[key]

    def _probe(self, dtype: str, single_loop: bool) -> float | None:
        """FLOP/s of a square matmul: a small one first, a larger one only when the small one was
        quick (a slow dtype — float16 in numpy runs ~0.3 GFLOP/s — must not make the probe slow)."""
        rate = None
        for size in PROBE_SIZES[single_loop]:
            seconds = self._time(dtype, single_loop, size)
            if seconds is None:
                return rate
            rate = 2 * size**3 / max(seconds, 1e-9)
            if seconds > QUICK_PROBE_SECONDS:
                break
        return rate

    def _time(self, dtype: str, single_loop: bool, size: int) -> float | None:
        probe = Workload(id=0, location="probe", path=None, line=None, column=None, operation="matmul",
                         framework=None, expression="probe", operand_shapes=((size, size), (size, size)),
                         operand_dtype=dtype, output_dtype=dtype, steps=(Step((0, 1), "ij,jk->ik", single_loop),))
        if self.backend.unsupported(probe):
            return None
        try:
            (call,) = self.backend.prepare(probe, 1)
            timing = time_calls(call, warmup=1, repeats=3, min_repeats=1, budget_seconds=0.2,
                                clock=self.backend.clock)
        except Exception:  # noqa: BLE001 - a dtype the backend cannot run here: use float32's rate
            return None
        return timing.best


def forecast(workload: Workload, rates: MachineRates, settings) -> Forecast:
    """The predicted time of one run and of the whole site (warm-up plus the repeats that fit in
    --seconds-per-site, never fewer than 3), and the synthetic data it holds."""
    seconds = 0.0
    if workload.attention_form is not None:
        rate = rates.rate(workload.operand_dtype, False)
        seconds = (workload.flops or 0) / rate if rate else 0.0
    else:
        for step, flops in zip(workload.steps, step_flops(workload)):
            rate = rates.rate(workload.operand_dtype, step.single_loop)
            seconds += flops / rate if rate else 0.0
        seconds *= workload.executions
    if workload.lower_bound_seconds is not None:
        seconds = max(seconds, float(workload.lower_bound_seconds))
    fit = math.ceil(settings.seconds_per_site / seconds) if seconds > 0 else settings.repeats
    repeats = min(settings.repeats, max(3, fit))
    return Forecast(seconds, settings.warmup + repeats, workload.footprint_bytes())


def over_limits(workload: Workload, predicted: Forecast, settings) -> str | None:
    """Why the site is not run, said with the predicted numbers; None when it fits."""
    cap = settings.memory_cap_bytes
    if cap is not None and predicted.footprint_bytes > cap:
        return (f"needs about {format_bytes(predicted.footprint_bytes)} of synthetic data, over the memory cap "
                f"{settings.memory_cap_text}; lower dims with --dim or raise --memory-cap")
    limit = settings.max_site_seconds
    if limit is not None and predicted.site_seconds > limit:
        return (f"predicted {duration_text(predicted.site_seconds)} ({predicted.runs} runs of "
                f"{duration_text(predicted.run_seconds)}), over --max-site-seconds {limit:g}; lower dims with "
                "--dim or raise --max-site-seconds")
    return None
