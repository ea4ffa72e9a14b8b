"""The CUDA measurements behind `calibrate --device cuda`: HBM streaming and cuBLAS matmuls.

Timed with CUDA events (kernel launches return before the GPU finishes). The bf16/fp16 records
claim float32 accumulation, so the reduced-precision reduction switches are turned off while they
are measured; float32 is measured twice, with TF32 off (operation class `dense-matmul`) and on
(`dense-matmul-tf32`), because the shipped datasheets keep the two apart.
"""

from __future__ import annotations

import contextlib

from .calibration import CUDA_BOUNDARY, CalibrationStep, RateMeasurement, RecordKey, Settings
from .timing import cuda_event_clock, time_calls

GIB = 2**30

# (label, operand dtype, operation class, allow_tf32)
CUDA_MATMULS = (
    ("bfloat16", "bfloat16", "dense-matmul", False),
    ("float16", "float16", "dense-matmul", False),
    ("float32", "float32", "dense-matmul", False),
    ("tf32", "float32", "dense-matmul-tf32", True),
)


def cuda_sizes(settings: Settings) -> tuple[int, ...]:
    return (1024, 2048, 4096) if settings.quick else (1024, 2048, 4096, 8192, 16384)


@contextlib.contextmanager
def _matmul_mode(torch, allow_tf32: bool):
    matmul = torch.backends.cuda.matmul
    saved = (matmul.allow_tf32, matmul.allow_bf16_reduced_precision_reduction,
             matmul.allow_fp16_reduced_precision_reduction)
    matmul.allow_tf32 = allow_tf32
    matmul.allow_bf16_reduced_precision_reduction = False
    matmul.allow_fp16_reduced_precision_reduction = False
    try:
        yield
    finally:
        (matmul.allow_tf32, matmul.allow_bf16_reduced_precision_reduction,
         matmul.allow_fp16_reduced_precision_reduction) = saved


def _timed_matmul(torch, device, n: int, dtype: str, tf32: bool, settings: Settings, budget: float, clock):
    a = torch.randn(n, n, device=device, dtype=getattr(torch, dtype))
    b = torch.randn(n, n, device=device, dtype=getattr(torch, dtype))
    out = torch.empty(n, n, device=device, dtype=getattr(torch, dtype))
    with _matmul_mode(torch, tf32):
        return time_calls(lambda: torch.mm(a, b, out=out), warmup=3, repeats=settings.max_repeats,
                          budget_seconds=budget, clock=clock)


def cuda_matmul_steps(torch, device, settings: Settings) -> list:
    clock = cuda_event_clock(torch, device)
    steps = []
    for label, dtype, operation_class, tf32 in CUDA_MATMULS:
        key = RecordKey("compute", operation_class, dtype)
        best = {"rate": None}
        for n in cuda_sizes(settings):
            def run(budget, n=n, label=label, dtype=dtype, tf32=tf32, best=best):
                flops = 2 * n**3
                if best["rate"] and flops / best["rate"] * 6 > budget:
                    return None  # predicted to overrun this step's share of the time
                timing = _timed_matmul(torch, device, n, dtype, tf32, settings, budget, clock)
                torch.cuda.empty_cache()  # the operands died with _timed_matmul's frame
                measurement = RateMeasurement(f"torch cuda {label} matmul", f"{n}x{n}x{n}", flops, timing)
                best["rate"] = max(best["rate"] or 0.0, measurement.best_rate)
                return measurement
            steps.append(CalibrationStep(f"cuda {label} matmul {n}x{n}", key, run))
    return steps


def cuda_stream_steps(torch, device, settings: Settings) -> list:
    """Copy (2 bytes moved per byte) and triad (3), over arrays far larger than the L2 cache."""
    clock = cuda_event_clock(torch, device)
    key = RecordKey("bandwidth", traffic_boundary=CUDA_BOUNDARY)
    free, _ = torch.cuda.mem_get_info(device)
    nbytes = min(256 * 2**20 if settings.quick else GIB, free // 8)
    size = f"{nbytes // 2**20} MiB"

    def kernel(name, factor, make_call):
        def run(budget):
            n = nbytes // 4
            a = torch.empty(n, device=device)
            b = torch.full((n,), 2.0, device=device)
            c = torch.full((n,), 3.0, device=device)
            timing = time_calls(make_call(a, b, c), warmup=3, repeats=settings.max_repeats, budget_seconds=budget,
                                clock=clock)
            del a, b, c
            torch.cuda.empty_cache()
            return RateMeasurement(name, size, factor * nbytes, timing)
        return run

    copy = kernel("torch cuda copy a=b (read + write)", 2, lambda a, b, c: (lambda: a.copy_(b)))
    triad = kernel("torch cuda triad a=b+2c (2 reads + write)", 3,
                   lambda a, b, c: (lambda: torch.add(b, c, alpha=2.0, out=a)))
    return [CalibrationStep(f"cuda copy {size}", key, copy), CalibrationStep(f"cuda triad {size}", key, triad)]
