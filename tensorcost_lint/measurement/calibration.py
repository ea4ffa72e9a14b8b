"""`tensorcost calibrate`: measure this machine's peak matmul rates and sustained bandwidth.

Which number becomes the evidence: the BEST rate over every repeat and size, not the median. The
evidence is what `measure` later checks runs against, and a bound must hold: measured time ≥
FLOPs / peak. A peak set at the median would be beaten by half of all later runs of the very same
kernel, so it would be violated by construction; the best sustained rate seen is the closest
honest stand-in for "the fastest this machine goes". The median and the spread are recorded beside
it (in `source`) so a reader sees how noisy the machine was.
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field

from .kernel_libraries import KernelLibrary
from .timing import Timing

# operand dtype -> the accumulation its dense-matmul record is for (the safe accumulator, which is
# what BLAS, MKL/oneDNN and cuBLAS use by default for these dtypes)
ACCUMULATION = {"float64": "float64", "float32": "float32", "bfloat16": "float32", "float16": "float32"}

CPU_BOUNDARY = "dram-to-cpu"
CUDA_BOUNDARY = "hbm-to-compute"


@dataclass(frozen=True)
class RateMeasurement:
    """One kernel at one size: `work` FLOPs or bytes per call, and its timing."""

    kernel: str  # "numpy float32 matmul", "numpy copy (read + write)"
    size: str  # "1024x1024x1024", "256 MiB"
    work: int
    timing: Timing

    @property
    def best_rate(self) -> float:
        return self.work / self.timing.best

    @property
    def median_rate(self) -> float:
        return self.work / self.timing.median


@dataclass(frozen=True)
class RecordKey:
    """What one evidence record is for: a compute record (operation class, dtypes) or a bandwidth
    record (traffic boundary)."""

    kind: str  # compute | bandwidth
    operation_class: str = ""
    operand_dtype: str = ""
    traffic_boundary: str = ""

    @property
    def accumulation_dtype(self) -> str:
        return ACCUMULATION.get(self.operand_dtype, self.operand_dtype)

    def describe(self) -> str:
        if self.kind == "bandwidth":
            return f"{self.traffic_boundary} bandwidth"
        return f"{self.operation_class} {self.operand_dtype}"


@dataclass
class MeasuredRecord:
    key: RecordKey
    candidates: list = field(default_factory=list)  # RateMeasurement, every kernel and size tried

    @property
    def best(self) -> RateMeasurement:
        return max(self.candidates, key=lambda m: m.best_rate)


@dataclass
class Calibration:
    device_id: str
    device_name: str
    boundary: str
    measured: str  # ISO date
    quick: bool
    libraries: list  # KernelLibrary
    records: dict = field(default_factory=dict)  # RecordKey -> MeasuredRecord
    skipped: list = field(default_factory=list)  # (what, why): dtypes a backend could not run

    def add(self, key: RecordKey, measurement: RateMeasurement | None) -> None:
        if measurement is not None:
            self.records.setdefault(key, MeasuredRecord(key)).candidates.append(measurement)

    def compute_records(self) -> list:
        return [r for k, r in self.records.items() if k.kind == "compute"]

    def bandwidth_records(self) -> list:
        return [r for k, r in self.records.items() if k.kind == "bandwidth"]


@dataclass(frozen=True)
class CalibrationStep:
    """One measurement to run: `run(budget_seconds)` returns a RateMeasurement, or None when it
    was skipped (too slow for the time left, or a dtype the backend lacks)."""

    label: str
    key: RecordKey
    run: object  # callable(float) -> RateMeasurement | None


@dataclass(frozen=True)
class Settings:
    quick: bool = False
    threads: int | None = None  # None: the backends' defaults (usually every core)
    budget_seconds: float = 45.0  # the whole command stays under a minute

    @property
    def matmul_sizes(self) -> tuple[int, ...]:
        # small sizes matter: a cache-resident matmul can run faster than a large one, and any
        # size faster than the recorded peak would later show up as a violated bound
        return (64, 128, 256, 512) if self.quick else (64, 128, 256, 512, 1024, 2048, 4096)

    @property
    def max_repeats(self) -> int:
        return 7 if self.quick else 30


def run_steps(steps: list, calibration: Calibration, settings: Settings, progress) -> Calibration:
    """Run every step within the time budget: each gets an equal share of the time left."""
    deadline = time.perf_counter() + settings.budget_seconds
    for index, step in enumerate(steps):
        progress.step(step.label)
        left = deadline - time.perf_counter()
        share = max(left, 0.0) / (len(steps) - index)
        calibration.add(step.key, step.run(share))
    return calibration


def new_calibration(device_id: str, device_name: str, boundary: str, settings: Settings,
                    libraries: list[KernelLibrary]) -> Calibration:
    return Calibration(device_id, device_name, boundary, _dt.date.today().isoformat(), settings.quick, libraries)
