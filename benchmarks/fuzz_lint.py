"""Fuzz the whole lint pass with generated model-like programs, outside pytest, for as long as asked.

    .venv/bin/python benchmarks/fuzz_lint.py --seconds 120
    .venv/bin/python benchmarks/fuzz_lint.py --examples 2000 --seed 7
    .venv/bin/python benchmarks/fuzz_lint.py --hypothesmith --seconds 60   # random valid Python instead

Each round is one hypothesis run with a fresh seed; a failure (exception escaping `lint_source`,
TCL900, E999 on valid Python, a site that breaks the report's invariants, or a program over the time
bound) is shrunk by hypothesis and printed as a minimal reproducer: the program, the problem, and a
one-liner that replays it. Exit 1 if anything failed, 0 otherwise. The strategies live in
tests/robustness/model_programs.py; the pytest suite runs a few hundred of the same examples.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.robustness.lint_checks import lint_problem  # noqa: E402
from tests.robustness.model_programs import model_programs  # noqa: E402

ROUND_EXAMPLES = 100


class LintFailure(AssertionError):
    pass


def _strategy(use_hypothesmith: bool):
    if not use_hypothesmith:
        return model_programs()
    import hypothesmith

    return st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node())


def run_round(strategy, examples: int, round_seed: int, failures: list, use_hypothesmith: bool = False) -> int:
    """One hypothesis run; returns how many programs it linted. The last failing (shrunk) program
    is kept in `failures`."""
    count = [0]
    last = {}

    @hypothesis_seed(round_seed)
    @settings(max_examples=examples, deadline=None, database=None, print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def check(source):
        count[0] += 1
        problem = lint_problem(source, prefilter=not use_hypothesmith)
        if problem:
            last["source"], last["problem"] = source, problem
            raise LintFailure(problem)

    try:
        check()
    except LintFailure:
        failures.append((round_seed, last["source"], last["problem"]))
    return count[0]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="stop starting new rounds after this long")
    parser.add_argument("--examples", type=int, default=None, help="stop after about this many programs instead")
    parser.add_argument("--seed", type=int, default=None, help="seed of the first round (default: random)")
    parser.add_argument("--hypothesmith", action="store_true", help="random valid Python (hypothesmith) instead")
    parser.add_argument("--stop-on-failure", action="store_true")
    args = parser.parse_args(argv)

    strategy = _strategy(args.hypothesmith)
    first = args.seed if args.seed is not None else random.randrange(2**32)
    failures: list = []
    total, rounds, start = 0, 0, time.perf_counter()
    while True:
        elapsed = time.perf_counter() - start
        if args.examples is not None and total >= args.examples:
            break
        if args.examples is None and elapsed >= args.seconds:
            break
        if failures and args.stop_on_failure:
            break
        budget = ROUND_EXAMPLES if args.examples is None else min(ROUND_EXAMPLES, args.examples - total)
        total += run_round(strategy, budget, first + rounds, failures, args.hypothesmith)
        rounds += 1
    elapsed = time.perf_counter() - start
    print(f"{total} programs in {rounds} rounds, {elapsed:.1f} s ({total / max(elapsed, 1e-9):.1f}/s), "
          f"first seed {first}: {len(failures)} failing round(s)")
    seen = set()
    for round_seed, source, problem in failures:
        key = problem.splitlines()[-1] if problem.startswith("exception") else problem
        if key in seen:
            continue
        seen.add(key)
        print("=" * 100)
        print(f"round seed {round_seed}: {problem.rstrip()}")
        print("-" * 40 + " minimal program " + "-" * 40)
        print(source.rstrip())
        print("-" * 40 + " replay " + "-" * 40)
        print("from tests.robustness.lint_checks import lint_problem; print(lint_problem(" + repr(source) + "))")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
