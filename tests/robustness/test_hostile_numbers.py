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


_MODEL = ("import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
          "        self.w = nn.Parameter(torch.empty(64, 64))\n\n    def forward(self, x):\n{body}")


@pytest.mark.parametrize("body", [
    "        y = torch.zeros(2, 0x" + "f" * 5000 + ")\n        return y @ self.w\n",
    "        n = 4096\n" + "        n = n * n\n" * 20 + "        y = torch.zeros(2, n)\n        return y @ self.w\n",
    # each line doubles the digits: without a bound, forty lines are a 2**40-digit number
    "        n = 4096\n" + "        n = n * n\n" * 40 + "        y = torch.zeros(2, n)\n        return y @ self.w\n",
], ids=["hex-literal", "squared-twenty-times", "squared-forty-times"])
def test_a_size_past_the_digit_limit_in_model_code_is_never_a_traceback(tmp_path, body):
    """A 5,000-digit hex literal (valid Python, unlike a decimal one) was an internal error in
    `model` and TCL900 in `check` (str() in a shape message); a size squared twenty times
    (3.8 million digits) was a traceback in `check --format json` and `report`, and took seconds per
    command; a folded size past 2**256 is unknown, so forty squarings cost what one does."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text("dims: {B: 2}\n")
    (tmp_path / "m.py").write_text(_MODEL.format(body=body))
    runs = [run_tensorcost("check", "m.py", "--no-cache", "--format", fmt, cwd=tmp_path)
            for fmt in ("text", "json", "sarif", "github")]
    runs.append(run_tensorcost("report", "m.py", cwd=tmp_path))
    runs += [run_tensorcost("model", "--entry", "m.py:M.forward", "--input", "x=float32 B 64", "--format", fmt,
                            cwd=tmp_path) for fmt in ("text", "json")]
    for ran in runs:
        assert ran.returncode in (0, 1) and "Traceback" not in ran.stderr, ran.stderr[-1500:]
        assert len(ran.stdout) < 200_000
    text, model_text = runs[0].stdout, runs[-2].stdout
    assert "TCL900" not in text and "internal error" not in model_text, (text[-1500:], model_text[-1500:])
