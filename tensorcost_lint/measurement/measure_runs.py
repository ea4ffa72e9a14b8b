"""`measure`: run each workload on synthetic operands and hold the measured time against its bound.

A measured median below the lower bound is a violation of the evidence — the hardware record
claims the machine cannot go that fast, and it just did — and is always reported as such; there
is no tolerance band, because the evidence's peak is already the best rate calibration saw.

Every timed run starts with operands that are not in cache: the bound counts each operand as
crossing the traffic boundary, and a run that found them in cache could beat a bound that is in
fact right. Small operands get a fresh copy per run, with at least twice the cache's size of other
copies written since that copy was made; writing a buffer over the whole cache before each run
would do the same, but it also evicts the interpreter, whose cold start would then be timed as if
it were the operation's. Operands larger than that cache bound need neither, and when copies would
not fit under the memory cap, the buffer is the fallback.

A workload that runs `count` executions is timed once per sample and scaled by the count: the
executions are identical, and back to back the later ones would find their operands in cache,
which the model (every execution reads across the boundary) does not allow for.
"""

from __future__ import annotations

import gc
import math
from dataclasses import dataclass

from estimator.units import format_bytes

from .kernel_libraries import threads_recorded
from .time_forecast import Forecast, MachineRates, forecast, over_limits
from .timing import Timing, time_calls
from .workloads import Workload, operand_bytes

HELD = "held"
VIOLATED = "EVIDENCE VIOLATED"
NO_BOUND = "no bound"
SKIPPED = "skipped"
FAILED = "failed"


@dataclass(frozen=True)
class MeasureSettings:
    repeats: int = 10
    warmup: int = 2
    seconds_per_site: float = 2.0
    memory_cap_bytes: int | None = None
    memory_cap_text: str = ""
    max_site_seconds: float | None = None  # predicted wall time of a site (all its runs) above which it is skipped


@dataclass(frozen=True)
class Measurement:
    workload: Workload
    status: str
    reason: str | None = None
    kernel: str | None = None
    timing: Timing | None = None  # all executions (samples of one, scaled by the count)

    @property
    def ratio(self) -> float | None:
        bound = self.workload.lower_bound_seconds
        if self.timing is None or bound is None or bound == 0:
            return None
        return self.timing.median / float(bound)


def _status(workload: Workload, timing: Timing) -> tuple[str, str | None]:
    if workload.lower_bound_seconds is None:
        return NO_BOUND, workload.bound_reason
    if timing.median < float(workload.lower_bound_seconds):
        return VIOLATED, (f"measured median is below the lower bound: the {workload.hardware_id} evidence "
                          "claims more time than this run took (re-run calibrate, or check its threads)")
    return HELD, None


def measure_one(workload: Workload, backend, settings: MeasureSettings) -> Measurement:
    if workload.skip_reason:
        return Measurement(workload, SKIPPED, workload.skip_reason)
    why_not = backend.unsupported(workload)
    if why_not:
        return Measurement(workload, SKIPPED, why_not)
    footprint = workload.footprint_bytes()
    cap = settings.memory_cap_bytes
    if cap is not None and footprint > cap:
        return Measurement(workload, SKIPPED, f"needs about {format_bytes(footprint)} of synthetic data, over the "
                                              f"memory cap {settings.memory_cap_text}; lower dims with --dim or "
                                              "raise --memory-cap")
    kernel = backend.describe(workload)
    copies, evict = _cold_operands(workload, backend, settings, footprint)
    try:
        rotation = _Rotation(backend.prepare(workload, copies), evict)
        timing = time_calls(rotation.call, warmup=settings.warmup, repeats=settings.repeats, min_repeats=3,
                            budget_seconds=settings.seconds_per_site, before=rotation.advance, clock=backend.clock)
    except MemoryError:
        return Measurement(workload, SKIPPED, f"out of memory allocating about {format_bytes(footprint)}", kernel)
    except Exception as error:  # noqa: BLE001 - a backend refusing one shape must not end the run
        return Measurement(workload, FAILED, f"{type(error).__name__}: {' '.join(str(error).split())[:200]}", kernel)
    finally:
        rotation = None  # the operands go now, not when the next site has allocated its own
        gc.collect()
    timing = timing.scaled(workload.executions)
    status, reason = _status(workload, timing)
    return Measurement(workload, status, reason, kernel, timing)


class _Rotation:
    """Before each run (outside the timed region): the next copy of the operands, and the cache
    eviction when there are not enough copies."""

    def __init__(self, calls: list, evict) -> None:
        self.calls = calls
        self.evict = evict
        self.runs = 0
        self.current = calls[0]

    def advance(self) -> None:
        self.current = self.calls[self.runs % len(self.calls)]
        self.runs += 1
        if self.evict is not None:
            self.evict()

    def call(self):
        return self.current()


def _cold_operands(workload: Workload, backend, settings: MeasureSettings, footprint: int):
    """(copies of the operands, eviction to run before each run or None)."""
    operands = operand_bytes(workload)
    cache = 2 * backend.cache_bytes
    if operands >= cache:
        return 1, None
    runs = settings.warmup + settings.repeats
    copies = math.ceil(cache / max(operands, 1)) + runs
    cap = settings.memory_cap_bytes
    if cap is not None and copies * operands + footprint > cap:
        return 1, backend.evict
    return copies, None


@dataclass(frozen=True)
class PlannedSite:
    workload: Workload
    forecast: Forecast | None  # None when the site cannot run at all (unresolved, unsupported)
    skip_reason: str | None = None  # set when it does not run; with a forecast: over a limit

    @property
    def runs(self) -> bool:
        return self.skip_reason is None

    @property
    def over_limit(self) -> bool:
        return self.forecast is not None and self.skip_reason is not None


def plan_sites(workloads, backend, settings: MeasureSettings, rates: MachineRates) -> list[PlannedSite]:
    """Each workload with its predicted time and footprint, or why it is not run — decided before
    anything runs, so an hour-long site is listed and skipped instead of discovered."""
    planned = []
    for workload in workloads:
        reason = workload.skip_reason or backend.unsupported(workload)
        if reason:
            planned.append(PlannedSite(workload, None, reason))
            continue
        predicted = forecast(workload, rates, settings)
        reason = over_limits(workload, predicted, settings)
        planned.append(PlannedSite(workload, predicted, reason))
    return planned


def measure_workloads(planned: list[PlannedSite], backend, settings: MeasureSettings, progress,
                      finished: list | None = None) -> list[Measurement]:
    """Measurements in workload order. Skipped sites are final at once; each run site is appended
    to `finished` as it completes, so a Ctrl-C (KeyboardInterrupt, which propagates) leaves the
    caller the rows done so far."""
    finished = [] if finished is None else finished
    for site in planned:
        if not site.runs:
            finished.append(Measurement(site.workload, SKIPPED, site.skip_reason))
    for site in planned:
        if site.runs:
            progress.step(f"{site.workload.location} {site.workload.operation}")
            finished.append(measure_one(site.workload, backend, settings))
    progress.close()
    return sorted(finished, key=lambda m: m.workload.id)


def evidence_warnings(workloads, backend) -> list[str]:
    """What makes a comparison meaningless, said before the numbers: evidence not measured here,
    or measured with fewer threads than this run uses."""
    warnings = []
    seen = set()
    for workload in workloads:
        device = workload.hardware
        if device is None or device.id in seen:
            continue
        seen.add(device.id)
        if not device.source.startswith("tensorcost calibrate"):
            warnings.append(f"bounds use {device.id} evidence ({device.device}), which calibrate did not measure "
                            "on this machine: ratios compare two different machines (calibrate, then pass "
                            "--evidence calibrated.yaml)")
            continue
        recorded = threads_recorded(device.source)
        running = backend.library.threads
        if recorded is not None and running is not None and running > recorded:
            warnings.append(f"{device.id} evidence was measured with {recorded} thread(s) and this run uses "
                            f"{running}: the bound may not hold (pass --threads {recorded}, or recalibrate)")
    return warnings


def summary_counts(measurements) -> dict:
    counts = {HELD: 0, VIOLATED: 0, NO_BOUND: 0, SKIPPED: 0, FAILED: 0}
    for measurement in measurements:
        counts[measurement.status] += 1
    return counts
