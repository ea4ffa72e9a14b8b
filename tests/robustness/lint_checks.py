"""What "the pass survived this program" means, shared by the pytest fuzzers and
benchmarks/fuzz_lint.py: no exception escapes `lint_source`, no TCL900, no E999 on a program Python
itself compiles, and the whole pass finishes inside a time bound."""

from __future__ import annotations

import ast
import json
import time
import traceback
import warnings

from tensorcost_lint.config.project_config import ProjectConfig
from tensorcost_lint.driver.engine import lint_source
from tensorcost_lint.formats.site_records import site_record
from tensorcost_lint.driver.lint_settings import lint_settings

from .model_programs import DECLARED_DIMS, SEQUENCE_DIMS

# Generated programs are under ~150 lines; the whole pass on one runs in milliseconds. A second is
# far beyond any honest cost and well below a pathological (exponential, backtracking) one.
SECONDS_PER_PROGRAM = 2.0


def fuzz_config(**changes) -> ProjectConfig:
    """Declared dims and every rule on, including the default-off ledger, so each rule runs."""
    base = dict(dims=dict(DECLARED_DIMS), sequence_dims=SEQUENCE_DIMS, extend_select=("TCL501",),
                budgets=ProjectConfig().budgets)
    base.update(changes)
    return ProjectConfig(**base)


def python_accepts(source: str) -> bool:
    with warnings.catch_warnings():  # `1()` and friends warn at compile time; they are still valid
        warnings.simplefilter("ignore")
        try:
            compile(source, "<generated>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


MAX_COUNT = 2**63 - 1


def site_problem(site_result, path: str, config) -> str | None:
    """What every reported site must satisfy, whatever the source: it renders as JSON, no shape
    holds a negative size (a `-1` from view/reshape is solved or unknown, never a size), and the
    counts of a resolved site are exact integers inside the contract's 2**63-1."""
    reason = site_result.cost.reason or ""
    if "internal error" in reason:
        return f"internal error while costing a site (hidden as unresolved): {reason}"
    try:
        record = site_record(0, path, site_result, lint_settings(config, path))
        json.dumps(record, allow_nan=False)
    except Exception as error:  # noqa: BLE001
        return f"site record of `{site_result.site.expression}` does not render: {type(error).__name__}: {error}"
    shapes = [operand["shape"] for operand in record["operands"] if operand["shape"]]
    shapes += [record["output"]["shape"]] if record["output"] else []
    for shape in shapes:
        if any(isinstance(dim, int) and dim < 0 for dim in shape):
            return f"negative size in a shape at `{record['expression']}`: {shape}"
    if record["resolved"]:
        for key in ("flops", "output_bytes", "traffic_bytes", "retained_bytes"):
            value = record[key]
            if not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
                return f"resolved site `{record['expression']}` has {key}={value!r}"
    return None


def lint_problem(source: str, config=None, *, path: str = "generated.py",
                 seconds: float = SECONDS_PER_PROGRAM, prefilter: bool = True) -> str | None:
    """None if the pass behaved; otherwise a one-paragraph description of what went wrong.
    `prefilter=False` forces the full parse and analysis on text the regex prefilter would skip."""
    config = config or fuzz_config()
    start = time.process_time()
    try:
        result = lint_source(source, path, config, prefilter=prefilter)
    except BaseException as error:  # noqa: BLE001 - anything escaping is the bug being looked for
        return "exception escaped lint_source:\n" + "".join(traceback.format_exception(error))
    elapsed = time.process_time() - start
    internal = [f for f in result.findings if f.code == "TCL900"]
    if internal:
        return "TCL900 on a valid program: " + "; ".join(f.message for f in internal)
    syntax = [f for f in result.findings if f.code == "E999"]
    if syntax and python_accepts(source):
        return "E999 on a program Python compiles: " + "; ".join(f"{f.line}:{f.column} {f.message}" for f in syntax)
    for site_result in result.sites:
        problem = site_problem(site_result, path, config)
        if problem:
            return problem
    if elapsed > seconds:
        # One retry: a GC pause or a busy CI machine must not fail the run, a real blowup repeats.
        start = time.process_time()
        lint_source(source, path, config, prefilter=prefilter)
        elapsed = min(elapsed, time.process_time() - start)
        if elapsed > seconds:
            return f"took {elapsed:.2f} s (> {seconds} s) for {len(source)} characters"
    return None
