"""How much time tensorcost adds where users run it, against flake8 in the same run.

    python benchmarks/lint_speed.py [CORPUS_DIR ...] [--config FILE] [--repeats N]

With no corpus, a corpus of realistic model files is generated from `examples/` (renamed copies
padded with the plumbing real model files carry). Prints lines per second and the issue's ratios:
time flake8 + TCL adds to flake8 alone, `tensorcost check` cold and warm against flake8 alone, and
peak memory. CPU time of the child processes is reported (wall time swings on a shared machine).
flake8 "alone" is the same flake8 with the tensorcost plugin filtered out of its plugin discovery.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_FLAKE8_WITHOUT_TENSORCOST = """
import importlib.metadata as metadata
_all = metadata.distributions
metadata.distributions = lambda **kw: [d for d in _all(**kw) if (d.metadata["Name"] or "").lower().replace("_", "-") != "tensorcost-lint"]
from flake8.main.cli import main
main()
"""

_PLUMBING = '''

def _init_weights(module, std=0.02):
    """Weight initialisation as model files carry it: nothing tensorcost reports."""
    for name, parameter in module.named_parameters():
        if name.endswith("bias"):
            parameter.data.zero_()
        else:
            parameter.data.normal_(mean=0.0, std=std)
    return module


def load_checkpoint(path, strict=True):
    state = {}
    with open(path, "rb") as handle:
        state["raw"] = handle.read()
    if strict and not state["raw"]:
        raise ValueError(f"empty checkpoint {path}")
    return state
'''


def generate_corpus(directory: Path, copies: int) -> None:
    sources = sorted((ROOT / "examples").glob("*.py"))
    for copy in range(copies):
        for source in sources:
            text = source.read_text() + _PLUMBING * 3
            (directory / f"{source.stem}_{copy}.py").write_text(text)
    shutil.copy(ROOT / "examples" / "tensorcost.yaml", directory / "tensorcost.yaml")


def _child_cpu_seconds(command: list[str], cwd: Path, env=None) -> tuple[float, float]:
    """(CPU seconds, peak RSS MiB) of one child run, its own (with the processes it waited for):
    `RUSAGE_CHILDREN`'s peak is the largest of every child so far, whichever ran last."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def best(command, cwd, repeats, env=None) -> tuple[float, float]:
    runs = [_child_cpu_seconds(command, cwd, env) for _ in range(repeats)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def best_alternating(first, second, cwd, repeats):
    """`best` of two commands run in turn (first, second, first, ...), and the median of the
    pair-by-pair ratios second/first: a pair shares the machine's speed of the moment, so drift on a
    shared or throttled machine moves the fastest runs of each side apart but not the paired ratio."""
    runs: tuple[list, list] = ([], [])
    for _ in range(repeats):
        runs[0].append(_child_cpu_seconds(first, cwd))
        runs[1].append(_child_cpu_seconds(second, cwd))
    ratios = sorted(b[0] / a[0] for a, b in zip(*runs) if a[0])
    middle = len(ratios) // 2
    median = (ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2) if ratios else 0.0
    best_runs = tuple((min(r[0] for r in side), max(r[1] for r in side)) for side in runs)
    return best_runs[0], best_runs[1], median


def count_lines(paths) -> tuple[int, int]:
    files = lines = 0
    for path in paths:
        for file in Path(path).rglob("*.py"):
            files += 1
            with open(file, "rb") as handle:
                lines += sum(1 for _ in handle)
    return files, lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="*", help="directories of Python files (default: a generated corpus)")
    parser.add_argument("--config", help="tensorcost config for the corpus (default: discovered)")
    parser.add_argument("--repeats", type=int, default=2, help="runs per measurement; the fastest counts (flake8 alone and with TCL: also the median paired ratio)")
    parser.add_argument("--copies", type=int, default=40, help="copies of each example in a generated corpus")
    args = parser.parse_args()

    # Bytecode as an installed wheel has it: with PYTHONDONTWRITEBYTECODE set (or a read-only tree), an
    # editable checkout would recompile every changed module in every timed run, and only the TCL side pays.
    for package in ("tensorcost_lint", "estimator", "shape_annotations"):
        spec = importlib.util.find_spec(package)
        if spec and spec.submodule_search_locations:
            for location in spec.submodule_search_locations:
                compileall.compile_dir(location, quiet=1)
    workspace = Path(tempfile.mkdtemp(prefix="tensorcost-speed-"))
    if args.corpus:
        targets = [os.path.abspath(p) for p in args.corpus]
        cwd = Path.cwd()
    else:
        corpus = workspace / "corpus"
        corpus.mkdir()
        generate_corpus(corpus, args.copies)
        targets, cwd = [str(corpus)], workspace
    files, lines = count_lines(targets)
    python = sys.executable
    config = ["--config", args.config] if args.config else []
    flake8_config = ["--tensorcost-config", args.config] if args.config else []
    cache = str(workspace / "cache")

    # --isolated: no flake8 config file of the working directory or the user's changes either run.
    # The two runs alternate, so that load from elsewhere on a shared machine falls on both alike.
    flake8_alone, flake8_tcl, paired = best_alternating(
        [python, "-c", _FLAKE8_WITHOUT_TENSORCOST, "--isolated", "--jobs", "1", *targets],
        [python, "-m", "flake8", "--isolated", "--jobs", "1", *flake8_config, *targets], cwd, args.repeats)
    check = [python, "-m", "tensorcost_lint.cli.main", "check", *config, *targets]
    cold = best([*check, "--no-cache"], cwd, args.repeats)
    subprocess.run([*check, "--cache-dir", cache], cwd=cwd, stdout=subprocess.DEVNULL, check=False)
    warm = best([*check, "--cache-dir", cache], cwd, args.repeats)
    parallel = best([*check, "--no-cache", "--jobs", str(os.cpu_count() or 1)], cwd, args.repeats)

    added = flake8_tcl[0] - flake8_alone[0]
    print(f"corpus: {files} files, {lines} lines ({'given' if args.corpus else 'generated from examples/'})")
    print(f"{'run':<40} {'CPU s':>8} {'lines/s':>10} {'x flake8':>9} {'peak MiB':>9}")
    rows = [
        ("flake8 alone (pyflakes + pycodestyle)", flake8_alone),
        ("flake8 + TCL", flake8_tcl),
        ("tensorcost check, cold (no cache)", cold),
        ("tensorcost check, warm (cache)", warm),
        (f"tensorcost check, cold, --jobs {os.cpu_count()} (CPU summed)", parallel),
    ]
    for name, (cpu, peak) in rows:
        print(f"{name:<40} {cpu:>8.2f} {lines / cpu if cpu else 0:>10,.0f} {cpu / flake8_alone[0]:>9.3f} {peak:>9.0f}")
    print(f"time flake8 + TCL adds to flake8: {paired - 1:.1%} (median of {args.repeats} paired runs; "
          f"target <= 25%); fastest runs: {added:.2f} s = {added / flake8_alone[0]:.1%}")
    print(f"check cold / flake8: {cold[0] / flake8_alone[0]:.3f} (target <= 0.5); "
          f"warm / flake8: {warm[0] / flake8_alone[0]:.3f} (target <= 0.05); "
          f"peak memory {max(cold[1], warm[1]):.0f} MiB (target <= 300)")
    shutil.rmtree(workspace, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
