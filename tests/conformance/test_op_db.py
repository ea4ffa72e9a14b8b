"""Our shape and dtype rules against torch's own OpInfo and ModuleInfo samples (op_db.py,
module_db.py): no sample may disagree, coverage may not fall below what it is, and the coverage
page is current. Skipped where torch (or torch.testing._internal's expecttest) is not installed."""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import pytest

pytest.importorskip("torch.testing._internal.common_methods_invocations", exc_type=ImportError)

from tensorcost_lint.analysis import op_table  # noqa: E402

from . import report  # noqa: E402
from .module_db import module_tallies  # noqa: E402
from .op_db import AGREE, DISAGREE, UNKNOWN, op_tallies, run_op, table_entries  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# Floors: what the tables cover today. Raise them as rules land; a fall is a regression.
OP_ENTRIES_COVERED = 301
MODULES_COVERED = 56


@functools.lru_cache(maxsize=1)
def _tallies():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns on some samples (std of one element...)
        return tuple(op_tallies()), tuple(module_tallies())


def test_no_op_sample_disagrees():
    failures = [f"{t.name}: {f}" for t in _tallies()[0] for f in t.failures]
    assert not failures, "\n".join(failures)


def test_no_module_sample_disagrees():
    failures = [f"{t.name}: {f}" for t in _tallies()[1] for f in t.failures]
    assert not failures, "\n".join(failures)


def test_coverage_does_not_fall():
    ops, modules = _tallies()
    assert report.totals(ops)["covered"] >= OP_ENTRIES_COVERED, report.totals_line("op_db", ops)
    assert report.totals(modules)["covered"] >= MODULES_COVERED, report.totals_line("module_db", modules)


def test_coverage_page_is_current():
    page = (ROOT / report.PAGE).read_text(encoding="utf-8")
    assert page == report.page(*_tallies()), f"{report.PAGE} is stale: run `python benchmarks/op_coverage.py --write-docs`"


def _op(name):
    from torch.testing._internal.common_methods_invocations import op_db

    return next(op for op in op_db if op.name == name and not op.variant_test_name)


def test_a_wrong_rule_is_a_disagreement(monkeypatch):
    """The harness can fail: a transpose that keeps the shape is caught on torch's samples."""
    op = _op("t")
    monkeypatch.setitem(op_table.METHODS, "t", lambda interp, receiver, args: receiver)
    tally = run_op(op, (("method", "t"),))
    assert tally.counts[DISAGREE] > 0 and tally.failures


def test_an_unknown_rule_is_not_covered(monkeypatch):
    op = _op("t")
    monkeypatch.setitem(op_table.METHODS, "t", lambda interp, receiver, args: receiver.with_shape(None))
    tally = run_op(op, (("method", "t"),))
    assert tally.counts[UNKNOWN] > 0 and tally.counts[AGREE] == 0 and not tally.covered


def test_entries_follow_names_and_variants():
    """`nn.functional.softmax` is `torch.nn.functional.softmax`; an op with a method variant maps
    to the method, an in-place one to `NAME_`."""
    assert ("function", "torch.nn.functional.gelu") in table_entries(_op("nn.functional.gelu"))
    entries = table_entries(_op("add"))
    assert ("method", "add") in entries and ("method", "add_") in entries
    assert table_entries(_op("linalg.det")) == ()
