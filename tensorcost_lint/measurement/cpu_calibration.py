"""The CPU measurements behind `calibrate --device cpu`: streaming kernels and square matmuls.

Bandwidth kernels count bytes the way the cost model counts traffic — every operand read once,
every output written once (STREAM's convention: a copy moves 2 bytes per byte copied) — so a
bound computed with this rate compares like with like. Three access patterns are tried (copy,
add, matrix-vector) because read-heavy traffic often streams faster than copies, and the record
keeps the fastest: a matrix-vector site must not beat the evidence. Arrays are several times the
last-level cache, so the rate is DRAM's, not the cache's.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from .calibration import CPU_BOUNDARY, CalibrationStep, RateMeasurement, RecordKey, Settings
from .machine import available_memory_bytes, last_level_cache_bytes, usable_cpus
from .timing import time_calls

MIB = 2**20
GEMV_COLUMNS = 4096


def stream_bytes(settings: Settings) -> int:
    """Bytes per streaming array: 2x (quick) or 8x the last-level cache, at least 64/256 MiB,
    and never more than a tenth of free memory for the three arrays together."""
    cache = last_level_cache_bytes()
    wanted = max(2 * cache, 64 * MIB) if settings.quick else max(8 * cache, 256 * MIB)
    free = available_memory_bytes()
    if free:
        wanted = min(wanted, free // 30)
    return max(wanted // MIB, 8) * MIB


class _SizeSweep:
    """Square matmuls of growing size; a size predicted to overrun its time share is skipped, so
    the sweep stops where the machine gets too slow for the budget, not at a fixed size."""

    def __init__(self) -> None:
        self.best_rate = None

    def affordable(self, flops: int, budget: float, runs: int) -> bool:
        return self.best_rate is None or flops / self.best_rate * runs <= budget

    def seen(self, measurement: RateMeasurement) -> RateMeasurement:
        self.best_rate = max(self.best_rate or 0.0, measurement.best_rate)
        return measurement


def _matmul_steps(backend: str, dtype: str, make, settings: Settings) -> list:
    """One step per size; `make(n)` returns a zero-argument call computing one n x n x n matmul."""
    sweep = _SizeSweep()
    key = RecordKey("compute", "dense-matmul", dtype)
    steps = []
    for n in settings.matmul_sizes:
        def run(budget, n=n):
            flops = 2 * n**3
            if not sweep.affordable(flops, budget, runs=4):
                return None
            call = make(n)
            timing = time_calls(call, warmup=2, repeats=settings.max_repeats, min_repeats=3, budget_seconds=budget)
            return sweep.seen(RateMeasurement(f"{backend} {dtype} matmul", f"{n}x{n}x{n}", flops, timing))
        steps.append(CalibrationStep(f"{backend} {dtype} matmul {n}x{n}", key, run))
    return steps


def numpy_matmul_steps(np, settings: Settings) -> list:
    steps = []
    for dtype in ("float32", "float64"):
        def make(n, dtype=dtype):
            rng = np.random.default_rng(0)
            a = rng.standard_normal((n, n), dtype=dtype)
            b = rng.standard_normal((n, n), dtype=dtype)
            out = np.empty((n, n), dtype=dtype)  # preallocated: page faults are not matmul time
            return lambda: np.matmul(a, b, out=out)
        steps += _matmul_steps("numpy", dtype, make, settings)
    return steps


def torch_matmul_steps(torch, settings: Settings) -> list:
    steps = []
    for dtype in ("float32", "bfloat16"):
        def make(n, dtype=dtype):
            generator = torch.Generator().manual_seed(0)
            a = torch.randn(n, n, generator=generator).to(getattr(torch, dtype))
            b = torch.randn(n, n, generator=generator).to(getattr(torch, dtype))
            out = torch.empty(n, n, dtype=getattr(torch, dtype))
            return lambda: torch.mm(a, b, out=out)
        steps += _matmul_steps("torch", dtype, make, settings)
    return steps


class _NumpyStreams:
    """Three float32 arrays shared by the numpy streaming kernels, split into one chunk per thread
    (numpy's elementwise loops are single-threaded but release the GIL, so threads stream in
    parallel as a multi-threaded BLAS or torch kernel would)."""

    def __init__(self, np, nbytes: int, threads: int) -> None:
        self.np = np
        self.nbytes = nbytes
        self.threads = max(threads, 1)
        self.arrays = None
        self.pool = None

    def get(self):
        if self.arrays is None:
            n = self.nbytes // 4
            self.arrays = tuple(self.np.full(n, 1.0 + i, dtype=self.np.float32) for i in range(3))
        return self.arrays

    def parallel(self, kernel):
        arrays = self.get()
        n = arrays[0].shape[0]
        bounds = [(i * n // self.threads, (i + 1) * n // self.threads) for i in range(self.threads)]
        if self.threads == 1:
            return lambda: kernel(*arrays)
        if self.pool is None:
            self.pool = ThreadPoolExecutor(self.threads)

        def call():
            list(self.pool.map(lambda b: kernel(*(x[b[0]:b[1]] for x in arrays)), bounds))
        return call

    def release(self) -> None:
        self.arrays = None
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None


def numpy_stream_steps(np, settings: Settings, threads: int | None) -> list:
    streams = _NumpyStreams(np, stream_bytes(settings), threads or usable_cpus())
    key = RecordKey("bandwidth", traffic_boundary=CPU_BOUNDARY)
    size = f"{streams.nbytes // MIB} MiB"
    repeats = 5 if settings.quick else 10

    def copy(budget):
        call = streams.parallel(lambda a, b, c: np.copyto(a, b))
        timing = time_calls(call, warmup=1, repeats=repeats, budget_seconds=budget)
        return RateMeasurement("numpy copy a=b (read + write)", size, 2 * streams.nbytes, timing)

    def add(budget):
        call = streams.parallel(lambda a, b, c: np.add(b, c, out=a))
        timing = time_calls(call, warmup=1, repeats=repeats, budget_seconds=budget)
        return RateMeasurement("numpy add a=b+c (2 reads + write)", size, 3 * streams.nbytes, timing)

    def gemv(budget):
        a, _, _ = streams.get()
        matrix = a.reshape(-1, GEMV_COLUMNS)
        vector = np.ones(GEMV_COLUMNS, dtype=np.float32)
        out = np.empty(matrix.shape[0], dtype=np.float32)
        call = lambda: np.matmul(matrix, vector, out=out)  # noqa: E731 - BLAS threads itself
        timing = time_calls(call, warmup=1, repeats=repeats, budget_seconds=budget)
        streams.release()
        return RateMeasurement("numpy matrix-vector (reads matrix)", size,
                               matrix.nbytes + vector.nbytes + out.nbytes, timing)

    return [CalibrationStep(f"numpy copy {size}", key, copy), CalibrationStep(f"numpy add {size}", key, add),
            CalibrationStep(f"numpy matrix-vector {size}", key, gemv)]


def torch_stream_steps(torch, settings: Settings) -> list:
    key = RecordKey("bandwidth", traffic_boundary=CPU_BOUNDARY)
    nbytes = stream_bytes(settings)
    size = f"{nbytes // MIB} MiB"
    repeats = 5 if settings.quick else 10
    state = {}

    def arrays():
        if "a" not in state:
            n = nbytes // 4
            state.update(a=torch.ones(n), b=torch.full((n,), 2.0), c=torch.full((n,), 3.0))
        return state["a"], state["b"], state["c"]

    def triad(budget):
        a, b, c = arrays()
        timing = time_calls(lambda: torch.add(b, c, alpha=2.0, out=a), warmup=1, repeats=repeats,
                            budget_seconds=budget)
        return RateMeasurement("torch triad a=b+2c (2 reads + write)", size, 3 * nbytes, timing)

    def gemv(budget):
        a, _, _ = arrays()
        matrix = a.view(-1, GEMV_COLUMNS)
        vector = torch.ones(GEMV_COLUMNS)
        out = torch.empty(matrix.shape[0])
        timing = time_calls(lambda: torch.mv(matrix, vector, out=out), warmup=1, repeats=repeats,
                            budget_seconds=budget)
        state.clear()
        return RateMeasurement("torch matrix-vector (reads matrix)", size, nbytes + 4 * (GEMV_COLUMNS + out.shape[0]),
                               timing)

    return [CalibrationStep(f"torch triad {size}", key, triad),
            CalibrationStep(f"torch matrix-vector {size}", key, gemv)]
