"""Numbers past Python's 4,300-digit limit, and digits int() does not read, on every command line
that takes a count (issue 22, defect 4): one line naming the flag and the number's size, exit 2,
never a traceback and never the number echoed whole."""

from __future__ import annotations

import pytest

from tests.run_cli import run_tensorcost

from .cli_runs import assert_one_line_error

HUGE = "1" * 5000


@pytest.mark.parametrize("argv, flag", [
    (["plan", "ij,jk->ik", "--shapes", f"{HUGE}x2,2x3"], "--shapes"),
    (["plan", "ij,jk->ik", "--dim", f"i={HUGE}", "--dim", "j=2", "--dim", "k=3"], "--dim"),
    (["plan", "ij,jk->ik", "--shapes", "4x2,2x3", "--memory-limit", HUGE], "--memory-limit"),
    (["plan", "ij,jk->ik", "--shapes", "4x2,2x3", "--memory-limit", f"{HUGE}MiB"], "--memory-limit"),
    (["plan", "ij,jk->ik", "--shapes", "\u00b2x2,2x3"], "--shapes"),  # str.isdigit() is true, int() refuses
], ids=["shapes", "dim", "memory-limit", "memory-limit-unit", "superscript-digit"])
def test_a_huge_or_foreign_number_on_a_plan_command_line_is_one_line(tmp_path, argv, flag):
    ran = run_tensorcost(*argv, cwd=tmp_path)
    assert_one_line_error(ran, flag)
    assert HUGE not in ran.stderr and len(ran.stderr) < 400, ran.stderr[:400]


def test_a_long_but_small_number_still_plans(tmp_path):
    ran = run_tensorcost("plan", "ij,jk->ik", "--shapes", "0000000000000000000000004x2,2x3", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
