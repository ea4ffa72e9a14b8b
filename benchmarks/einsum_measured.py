"""Does the FLOP model predict what happens? Run numpy (and torch on CPU, if installed) with the
paths the planner models, on moderate sizes, and print each order's modelled FLOP ratio to the
best order next to its measured time ratio to the best order's time.

    .venv/bin/python benchmarks/einsum_measured.py [--max-gflop 4] [--repeats 3]

Threads: 1 per library by default (TENSORCOST_BENCH_THREADS=N to change).

Every pairwise order runs through np.einsum(optimize=['einsum_path', ...]) and through
opt_einsum.contract(..., optimize=path, backend='torch'); np.einsum's default single loop runs
with optimize=False. Orders above --max-gflop are modelled but not run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# One thread per library unless told otherwise: numpy's BLAS pool and torch's OpenMP pool spin
# while idle, and on a small shared box they starve each other into 100x outliers.
THREADS = os.environ.get("TENSORCOST_BENCH_THREADS", "1")
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, THREADS)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from estimator.planner import build_network, framework_execution, plan_report  # noqa: E402

try:
    import opt_einsum
    import torch

    torch.set_num_threads(int(THREADS))
except ImportError:  # torch is optional here
    torch = None

NETWORKS = [
    ("matrix chain (Contract 5, scaled)", "ij,jk,kl->il", [(800, 800), (800, 64), (64, 10)]),
    ("4-matrix chain", "ab,bc,cd,de->ae", [(64, 1024), (1024, 32), (32, 1024), (1024, 64)]),
    ("attention without softmax", "bhqd,bhkd,bhke->bhqe", [(4, 8, 256, 64), (4, 8, 256, 64), (4, 8, 256, 64)]),
    ("Tucker core x 3 vectors", "a,b,c,abcz->z", [(24,), (24,), (24,), (24, 24, 24, 256)]),
    ("bilinear form", "i,ij,jk,k->", [(1500,), (1500, 1500), (1500, 1500), (1500,)]),
]


def _measure(function, repeats: int) -> float:
    """Best of at least `repeats` runs, more for fast ones (until 0.3 s): a shared 2-core box
    makes single runs of sub-millisecond contractions noisy."""
    start = time.perf_counter()
    function()  # warm-up: allocations, BLAS thread start, opt_einsum caches
    best = time.perf_counter() - start
    if best > 1.0:
        return best  # slow enough that one more run would tell nothing new
    spent, runs = 0.0, 0
    while runs < repeats or (spent < 0.3 and runs < 200):
        start = time.perf_counter()
        function()
        elapsed = time.perf_counter() - start
        best, spent, runs = min(best, elapsed), spent + elapsed, runs + 1
    return best


def _rank(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    index = 0
    while index < len(order):
        end = index
        while end + 1 < len(order) and values[order[end + 1]] == values[order[index]]:
            end += 1
        for position in range(index, end + 1):
            ranks[order[position]] = (index + end) / 2
        index = end + 1
    return ranks


def _concordance(pairs: list[tuple[int, float]]) -> tuple[int, int]:
    """Pairs whose modelled FLOPs differ by at least 2x, and how many of them measured the same way."""
    agree = total = 0
    for index, (flops_a, time_a) in enumerate(pairs):
        for flops_b, time_b in pairs[index + 1 :]:
            if max(flops_a, flops_b) >= 2 * min(flops_a, flops_b):
                total += 1
                agree += (flops_a > flops_b) == (time_a > time_b)
    return agree, total


def spearman(xs: list[float], ys: list[float]) -> float:
    rx, ry = _rank(xs), _rank(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    var = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return cov / var if var else 1.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-gflop", type=float, default=4.0, help="largest modelled order actually run")
    parser.add_argument("--max-mib", type=float, default=512.0, help="largest intermediate actually built")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    limit = args.max_gflop * 1e9
    rng = np.random.default_rng(0)
    modelled, measured_np, measured_torch = [], [], []
    concordance = {"numpy": [0, 0], "torch": [0, 0]}
    print(f"numpy {np.__version__}" + (f", torch {torch.__version__} (CPU, {torch.get_num_threads()} threads)" if torch else ", torch not installed"))
    for title, subscripts, shapes in NETWORKS:
        report = plan_report(subscripts, shapes)
        arrays = [rng.standard_normal(shape, dtype=np.float32) for shape in shapes]
        tensors = [torch.from_numpy(a) for a in arrays] if torch else None
        rows = [(order["path"], order["flops"], order["largest_intermediate_bytes"], ", ".join(order["chosen_by"]))
                for order in report["orders"]]
        single = framework_execution("numpy", build_network(subscripts, shapes))
        rows.append((None, single.flops, 0, "np.einsum default (one loop)"))
        best_flops = min(row[1] for row in rows)
        print(f"\n{title}: {subscripts}  shapes {shapes}")
        print(f"  {'path':<34}{'GFLOP':>9}{'x FLOPs':>10}{'numpy s':>10}{'x time':>10}{'torch s':>10}{'x time':>10}  chosen by")
        timings, numpy_pairs, torch_pairs = [], [], []
        for path, flops, largest_bytes, names in rows:
            if flops > limit or largest_bytes > args.max_mib * 2**20:
                timings.append((path, flops, names, None, None))
                continue
            if path is None:
                np_s = _measure(lambda: np.einsum(subscripts, *arrays, optimize=False), args.repeats)
                torch_s = None
            else:
                np_path = ["einsum_path", *[tuple(step) for step in path]]
                np_s = _measure(lambda: np.einsum(subscripts, *arrays, optimize=np_path), args.repeats)
                torch_s = None
                if torch:
                    steps = [tuple(step) for step in path]
                    torch_s = _measure(
                        lambda: opt_einsum.contract(subscripts, *tensors, optimize=steps, backend="torch"), args.repeats
                    )
            timings.append((path, flops, names, np_s, torch_s))
        best_np = min(t[3] for t in timings if t[3] is not None)
        torch_times = [t[4] for t in timings if t[4] is not None]
        best_torch = min(torch_times) if torch_times else None
        for path, flops, names, np_s, torch_s in timings:
            shown = "one loop over all indices" if path is None else str([tuple(s) for s in path])
            ratio = flops / best_flops
            if np_s is None:
                print(f"  {shown:<34}{flops / 1e9:>9.3f}{ratio:>10.2f}   not run (over --max-gflop/--max-mib)  {names}")
                continue
            np_ratio = np_s / best_np
            modelled.append(ratio)
            measured_np.append(np_ratio)
            torch_cells = f"{'-':>10}{'-':>10}"
            if torch_s is not None:
                measured_torch.append((ratio, torch_s / best_torch))
                torch_cells = f"{torch_s:>10.4f}{torch_s / best_torch:>10.2f}"
                torch_pairs.append((flops, torch_s))
            numpy_pairs.append((flops, np_s))
            print(f"  {shown:<34}{flops / 1e9:>9.3f}{ratio:>10.2f}{np_s:>10.4f}{np_ratio:>10.2f}{torch_cells}  {names}")
        for name, pairs in (("numpy", numpy_pairs), ("torch", torch_pairs)):
            agree, total = _concordance(pairs)
            concordance[name][0] += agree
            concordance[name][1] += total
    print()
    for name, (agree, total) in concordance.items():
        if total:
            print(f"{name}: of {total} pairs of orders of one network whose modelled FLOPs differ by >= 2x, "
                  f"the dearer one measured slower in {agree} ({100 * agree / total:.0f}%)")
    print(f"rank correlation (Spearman) of modelled FLOP ratio and numpy time ratio over {len(modelled)} runs: "
          f"{spearman(modelled, measured_np):.3f}")
    if measured_torch:
        xs, ys = zip(*measured_torch)
        print(f"rank correlation of modelled FLOP ratio and torch time ratio over {len(xs)} runs: {spearman(list(xs), list(ys)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
