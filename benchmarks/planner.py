"""Search time and chosen FLOPs of our exact planner against opt_einsum's 'optimal', 'dp' and
'greedy', for 4-14 operands, on random networks and real ones, as ratios in one table.

    .venv/bin/python benchmarks/planner.py [--quick] [--timeout SECONDS]

Columns: our exact DP's time and FLOPs; each opt_einsum search's time and its FLOPs as a ratio to
ours (1.000 = the same optimum; above 1 = a worse path). opt_einsum's 'optimal' is factorial: a
call over the timeout is shown as '>T s', and it is not tried again at larger sizes of that family.
Targets (issue 6): our exact optimum for 12 operands under 1 s, and faster than opt_einsum
'optimal' from 7 operands on.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import opt_einsum as oe  # noqa: E402
from opt_einsum.testing import rand_equation  # noqa: E402

from estimator.planner import build_network, optimal_order  # noqa: E402

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def attention(heads: int):
    """Linear-attention block without the softmax: projections of q, k, v, scores, output
    projection — 7 operands, then extra heads' value projections to grow the network."""
    subscripts = "bqm,mhd,bkn,nhd,bko,ohe,hep"
    shapes = [(8, 512, 512), (512, 8, 64), (8, 512, 512), (512, 8, 64), (8, 512, 512), (512, 8, 64), (8, 64, 512)]
    extra = []
    for index in range(heads):
        letter = "wxyz"[index]
        extra.append(f"p{letter}")
        shapes.append((512, 256))
    output = "bq" + ("".join("wxyz"[i] for i in range(heads)) if heads else "p")
    return ",".join([subscripts, *extra]) + "->" + output, shapes


def tensor_train(sites: int, bond: int = 32, physical: int = 4):
    """<A|B> of two matrix-product states over `sites` sites: 2*sites operands."""
    terms, shapes = [], []
    phys = LETTERS[:sites]
    bonds_a = LETTERS[sites : 2 * sites - 1]
    bonds_b = LETTERS[2 * sites - 1 : 3 * sites - 2]
    for bonds in (bonds_a, bonds_b):
        for site in range(sites):
            left = bonds[site - 1] if site > 0 else ""
            right = bonds[site] if site < sites - 1 else ""
            terms.append(left + phys[site] + right)
            shapes.append(tuple([bond] * len(left) + [physical] + [bond] * len(right)))
    return ",".join(terms) + "->", shapes


def triangle_multiplication(extra_projections: int = 0):
    """AlphaFold's triangle update with its projections: z_ij = sum_k a_ik b_jk, a = x Wa, b = x Wb,
    gated output projection; more operands by chaining output projections."""
    terms = ["ikm", "mc", "jkn", "nc", "co"]
    shapes = [(128, 128, 128), (128, 64), (128, 128, 128), (128, 64), (64, 128)]
    last = "o"
    for index in range(extra_projections):
        nxt = "pqrstuvw"[index]
        terms.append(last + nxt)
        shapes.append((128, 128))
        last = nxt
    return ",".join(terms) + "->ij" + last, shapes


def tucker_vectors(modes: int, mode_size: int = 3, free: int = 500):
    """A core tensor contracted with one small vector per mode: building the vectors' outer
    product first is cheapest, which a search that skips outer products (opt_einsum 'dp') misses."""
    letters = LETTERS[:modes]
    terms = list(letters) + [letters + "z"]
    shapes = [(mode_size,)] * modes + [(mode_size,) * modes + (free,)]
    return ",".join(terms) + "->z", shapes


def cases(quick: bool):
    for n in range(4, 15):
        for seed in range(1 if quick else 3):
            subscripts, shapes = rand_equation(n, 3, n_out=2, d_min=2, d_max=12, seed=1000 * seed + n)
            yield "random", n, subscripts, shapes
    for heads in range(0, 3):
        yield "attention", 7 + heads, *attention(heads)
    for sites in range(2, 8):
        yield "tensor-train", 2 * sites, *tensor_train(sites)
    for extra in range(0, 6):
        yield "triangle-mult", 5 + extra, *triangle_multiplication(extra)
    for modes in range(3, 9):
        yield "tucker-vectors", modes + 1, *tucker_vectors(modes)


def _time(function, repeats: int):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one random network per size")
    parser.add_argument("--timeout", type=float, default=20.0, help="limit per opt_einsum 'optimal' call (s)")
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    timed_out: set[str] = set()
    header = (f"{'family':<15}{'n':>3}  {'ours s':>9} {'our FLOPs':>12}  {'optimal s':>10} {'x':>6}  "
              f"{'dp s':>8} {'x':>6}  {'greedy s':>8} {'x':>6}  {'speedup vs optimal':>18}")
    print(header)
    print("-" * len(header))
    ours_by_n: dict[int, list[float]] = {}
    wins, comparisons = 0, 0
    for family, n, subscripts, shapes in cases(args.quick):
        network = build_network(subscripts, shapes)
        ours_s, ours = _time(lambda: optimal_order(network), 3 if n < 12 else 1)
        ours_by_n.setdefault(n, []).append(ours_s)
        cells = []
        optimal_s = None
        for strategy in ("optimal", "dp", "greedy"):
            if strategy == "optimal" and family in timed_out:
                cells.append(f"{'skipped':>10} {'':>6}")
                continue
            signal.setitimer(signal.ITIMER_REAL, args.timeout)
            try:
                spent, (_, info) = _time(
                    lambda: oe.contract_path(subscripts, *shapes, shapes=True, optimize=strategy), 1
                )
            except _Timeout:
                timed_out.add(family)
                cells.append(f"{'>' + format(args.timeout, 'g') + ' s':>10} {'':>6}")
                continue
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            ratio = f"{int(info.opt_cost) / ours.flops:6.3f}"
            width = 10 if strategy == "optimal" else 8
            cells.append(f"{spent:>{width}.4f} {ratio}")
            if strategy == "optimal":
                optimal_s = spent
        speedup = ""
        if optimal_s is not None:
            speedup = f"{optimal_s / ours_s:>17.1f}x"
            if n >= 7:
                comparisons += 1
                wins += optimal_s > ours_s
        elif family in timed_out:
            speedup = f"{'> ' + format(args.timeout / ours_s, '.0f') + 'x':>18}"
            if n >= 7:
                comparisons += 1
                wins += 1
        print(f"{family:<15}{n:>3}  {ours_s:>9.4f} {ours.flops:>12.4g}  {'  '.join(cells)}  {speedup}")
    print()
    for n in sorted(ours_by_n):
        times = ours_by_n[n]
        print(f"exact DP, {n:>2} operands: median {statistics.median(times):.4f} s, max {max(times):.4f} s")
    twelve = max(ours_by_n.get(12, [0.0]))
    print(f"target 12 operands < 1 s: {'met' if twelve < 1 else 'MISSED'} (max {twelve:.3f} s)")
    print(f"target faster than opt_einsum 'optimal' from 7 operands: {wins}/{comparisons} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
