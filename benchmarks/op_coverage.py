"""The op tables' coverage of torch's own OpInfo and ModuleInfo tests.

    python benchmarks/op_coverage.py [--write-docs] [--failures]

For every op of `torch.testing._internal.common_methods_invocations.op_db` that maps to an entry of
the analysis tables, and every module of `common_modules.module_db`, prints the samples agreeing,
unknown, skipped and disagreeing (tests/conformance), then the totals lines. `--write-docs`
regenerates docs/reference/op-coverage.md; `--failures` prints each disagreement. Needs torch
(and expecttest, which torch.testing._internal imports).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conformance import report  # noqa: E402
from tests.conformance.module_db import module_tallies  # noqa: E402
from tests.conformance.op_db import op_tallies  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-docs", action="store_true", help=f"regenerate {report.PAGE}")
    parser.add_argument("--failures", action="store_true", help="print every disagreement")
    options = parser.parse_args(argv)
    warnings.filterwarnings("ignore")  # torch warns on some samples (std of one element...)
    start = time.perf_counter()
    ops, modules = op_tallies(), module_tallies()
    seconds = time.perf_counter() - start
    print(report.table(ops))
    print()
    print(report.table(modules))
    print()
    if options.failures:
        for tally in [*ops, *modules]:
            for failure in tally.failures:
                print(f"DISAGREE {tally.name}: {failure}")
    print(report.totals_line("op_db", ops))
    print(report.totals_line("module_db", modules))
    print(f"{seconds:.1f} s")
    if options.write_docs:
        (ROOT / report.PAGE).write_text(report.page(ops, modules), encoding="utf-8")
        print(f"wrote {report.PAGE}")
    return 1 if report.totals(ops)["disagree"] or report.totals(modules)["disagree"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
