"""Hostile model code against `tensorcost model` (issue 22): each generated program at a hostile size
and, as the baseline in the same run, at a small size; CPU time and peak memory of the child
process, the FLOPs it reports against the program's own count, and the limits it lists. Then
`tensorcost check --format json` of the large files (defect 2), cold (its cache empty) and warm.

    python benchmarks/hostile_models.py [--check-only | --model-only] [--case NAME ...]

The programs are tests/robustness/model_programs_hostile.py's (call trees, padded shapes and an
undecided branch per level, module trees, long straight-line forwards). For the long forwards the
table also gives the CPU time and peak memory per statement past the baseline's (so the start-up
and imports cancel out).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.robustness.model_programs_hostile import (  # noqa: E402
    call_tree, long_forward, module_tree, named_forward, shapes_per_level, undecided_per_level)

MATMUL = 2 * 2 * 64 * 64
CASES = [  # (name, program, small size, hostile size)
    ("call tree", call_tree, 4, 40),
    ("padded shapes per level", shapes_per_level, 4, 20),
    ("undecided branch per level", undecided_per_level, 4, 20),
    ("module tree", module_tree, 4, 16),
    ("long forward (statements)", long_forward, 1000, 40_000),
    ("long forward, 2.3 MB file", long_forward, 1000, 100_000),
    ("long forward, a name each", named_forward, 1000, 40_000),
]
# the 2.3 MB forward read whole: the default steps budget (50,000) cuts it halfway, and lists the cut
CONFIG_LINES = {"long forward, 2.3 MB file": "work_budget: {steps: 200000}\n"}
STATEMENTS = (long_forward, named_forward)  # programs whose size is a count of statements
_PEAK = ("import atexit, runpy, sys\n"
         "def _peak():\n"
         "    with open('/proc/self/status') as s:\n"
         "        print(next(l.split()[1] for l in s if l.startswith('VmHWM:')), file=sys.stderr)\n"
         "atexit.register(_peak)\n"
         "sys.argv[0] = 'tensorcost'\n"
         "runpy.run_module('tensorcost_lint.cli.main', run_name='__main__')\n")


CHECK_CASES = [  # (name, file): `check` reads the whole file whatever its size
    ("long forward, 2.3 MB file", lambda: long_forward(100_000)),
    ("33,000 small functions", lambda: "".join(f"def f{i}(x):\n    return x @ x\n\n" for i in range(33_000))),
]


def _run(repo: Path, *arguments: str, env=None):
    """(the finished child, its CPU seconds, its peak RSS in MiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", _PEAK, *arguments], cwd=repo, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return done, cpu, int(done.stderr.strip().splitlines()[-1]) / 1024


def _repo(directory: str, source: str, config_lines: str = "") -> Path:
    repo = Path(directory)
    (repo / ".git").mkdir()
    (repo / "model.py").write_text(source)
    (repo / "tensorcost.yaml").write_text("dims: {B: 2}\n" + config_lines)
    return repo


def measure_check(source: str) -> list:
    """[(CPU s, peak MiB)] of a cold and a warm `check --format json`."""
    with tempfile.TemporaryDirectory() as directory:
        repo = _repo(directory, source)
        cache = {"TENSORCOST_CACHE_DIR": str(repo / "cache")}
        return [_run(repo, "check", "model.py", "--format", "json", env=cache)[1:] for _ in range(2)]


def measure(source: str, config_lines: str = "") -> dict:
    with tempfile.TemporaryDirectory() as directory:
        repo = _repo(directory, source, config_lines)
        done, cpu, peak = _run(repo, "model", "--entry", "model.py:M.forward", "--input", "x=float32 B 64",
                               "--format", "json")
    if done.returncode != 0:
        return {"cpu": cpu, "peak": peak, "flops": None, "limits": [done.stderr.strip().splitlines()[0][-90:]]}
    model = json.loads(done.stdout)["models"][0]
    limits = [f"{n['expression']}: {n['reason'][:70]}" for n in model["not_followed"]]
    return {"cpu": cpu, "peak": peak, "flops": model["totals"]["flops"], "limits": limits}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check-only", action="store_true", help="only the `check` table")
    parser.add_argument("--model-only", action="store_true", help="only the `model` table")
    parser.add_argument("--case", action="append", default=[], help="only this `model` case (repeatable)")
    arguments = parser.parse_args()
    if not arguments.check_only:
        _model_table(arguments.case)
    if arguments.model_only:
        return
    print(f"\n{'check --format json':<28} {'cold CPU s':>10} {'peak MiB':>9} {'warm CPU s':>10} {'peak MiB':>9}")
    for name, make in CHECK_CASES:
        (cold, cold_peak), (warm, warm_peak) = measure_check(make())
        print(f"{name:<28} {cold:>10.2f} {cold_peak:>9.0f} {warm:>10.2f} {warm_peak:>9.0f}")


def _model_table(only: list) -> None:
    print(f"{'case':<28} {'size':>7} {'CPU s':>7} {'peak MiB':>9} {'x baseline CPU':>14} {'µs/unit':>8} "
          f"{'KiB/unit':>8}  exact  limits listed")
    for name, program, small, hostile in CASES:
        if only and name not in only:
            continue
        config_lines = CONFIG_LINES.get(name, "")
        baseline = measure(program(small), config_lines)
        for size, result in ((small, baseline), (hostile, measure(program(hostile), config_lines))):
            exact = result["flops"] == program.flops(size, MATMUL)
            ratio = result["cpu"] / baseline["cpu"] if baseline["cpu"] else float("nan")
            # per statement past the baseline's: the start-up and imports cancel out
            grown = size - small if program in STATEMENTS else 0
            per_cpu = f"{(result['cpu'] - baseline['cpu']) / grown * 1e6:>8.0f}" if grown else f"{'':>8}"
            per_mem = f"{(result['peak'] - baseline['peak']) * 1024 / grown:>8.1f}" if grown else f"{'':>8}"
            print(f"{name:<28} {size:>7} {result['cpu']:>7.2f} {result['peak']:>9.0f} {ratio:>14.2f} {per_cpu} "
                  f"{per_mem}  {'yes' if exact else 'no ':<5}  {'; '.join(result['limits']) or '-'}")


if __name__ == "__main__":
    main()
