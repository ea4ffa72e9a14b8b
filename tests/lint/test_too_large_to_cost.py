"""D3 (issue 15): a site whose counts pass 2**63-1 is never silently unresolved. TCL404 says it is too
large to cost exactly (FLOPs as executed, formula, sizes), and TCL403 still fires when only the
executed order overflows (the ratio is then at least 2**63 / best)."""

from __future__ import annotations

import json

from tests.cli.inprocess import tensorcost_in
from tests.lint.helpers import lint

FOUR = '''
import numpy as np
from jaxtyping import Float


def chain(a: Float[np.ndarray, "n n"], b: Float[np.ndarray, "n n"], c: Float[np.ndarray, "n n"],
          d: Float[np.ndarray, "n n"]):
    return np.einsum("ij,jk,kl,lm->im", a, b, c, d)
'''
EINSUM = 'np.einsum("ij,jk,kl,lm->im", a, b, c, d)'
TCL404_8192 = (f"8:12 TCL404 too large to cost exactly: `{EINSUM}` as executed needs 4*n^5 FLOP with n=8192, "
               "≈ 1.5e20 FLOP, which exceeds 2**63−1 (≈ 9.22e18): no numbers are reported for this site")
TCL403_8192 = ("8:12 TCL403 costly contraction order: more than 9.22 EFLOP as executed vs 3.3 TFLOP for the best "
               "order [(0, 1), (0, 2), (0, 1)] (×2,796,203 or more ≥ contraction_regret 4); pass optimize=\"optimal\"")


def _found(result) -> list[str]:
    return [f"{f.line}:{f.column} {f.code} {f.message}" for f in result.findings]


def test_d3_four_operand_einsum_n8192_reports_too_large_and_costly_order():
    small = lint(FOUR, {"dims": {"n": 1024}})
    assert [f.code for f in small.findings] == ["TCL403"] and small.sites[0].cost.resolved
    result = lint(FOUR, {"dims": {"n": 8192}})
    assert _found(result) == [TCL403_8192, TCL404_8192]
    cost = result.sites[0].cost
    # the site's reason is the rule's own words, never the doubled "count overflow: count overflow:"
    assert not cost.resolved and cost.reason == TCL404_8192.split(" TCL404 ", 1)[1]
    # 2*n^3 per pairwise step, three steps: the best order is in range, the executed one is not
    assert cost.too_large.flops == 4 * 8192**5 and cost.too_large.sizes == (("n", 8192),)


def test_d3_four_operand_einsum_through_check(tmp_path):
    (tmp_path / "chain.py").write_text(FOUR.lstrip("\n"))
    ran = tensorcost_in(tmp_path, "check", "chain.py", "--dim", "n=8192", "--no-cache")
    assert ran.returncode == 1
    lines = ran.stdout.splitlines()
    # the file has no leading blank line: one line up from the snippet
    assert lines[:2] == ["chain.py:7:12: " + TCL403_8192.split(" ", 1)[1], "chain.py:7:12: " + TCL404_8192.split(" ", 1)[1]]
    assert "All checks passed" not in ran.stdout
    ran = tensorcost_in(tmp_path, "check", "chain.py", "--dim", "n=8192", "--no-cache", "--format", "json")
    report = json.loads(ran.stdout)
    assert [f["code"] for f in report["findings"]] == ["TCL403", "TCL404"]
    # TCL403's fix makes the site small enough to cost exactly: 3.3 TFLOP in the best order
    ran = tensorcost_in(tmp_path, "check", "chain.py", "--dim", "n=8192", "--no-cache", "--fix")
    assert ran.returncode == 0 and 'd, optimize="optimal")' in (tmp_path / "chain.py").read_text()
    assert ran.stdout.splitlines()[-1] == "All checks passed (checked 1 file; costed 1 of 1 call site)"


def test_d3_execution_count_at_the_ceiling_is_too_large(tmp_path):
    (tmp_path / "chain.py").write_text(FOUR.lstrip("\n"))
    (tmp_path / "tensorcost.yaml").write_text("dims: {n: 1024}\nexecution:\n  count: 9223372036854775807\n")
    ran = tensorcost_in(tmp_path, "check", "chain.py", "--no-cache")
    assert ran.returncode == 1
    # the orders are compared once per run, exactly; the site's counts times the runs pass the range
    assert ran.stdout.splitlines()[:2] == [
        "chain.py:7:12: TCL403 costly contraction order: np.einsum(optimize=False), the default: one loop over "
        "every index costs 4.5 PFLOP vs 6.44 GFLOP for the best order [(0, 1), (0, 2), (0, 1)] (×699,051 ≥ "
        "contraction_regret 4); pass optimize=\"optimal\"",
        f"chain.py:7:12: TCL404 too large to cost exactly: `{EINSUM}` as executed needs 4*n^5 FLOP with n=1024 per "
        "run × execution.count 9223372036854775807, ≈ 4.2e34 FLOP, which exceeds 2**63−1 (≈ 9.22e18): no numbers "
        "are reported for this site",
    ]
    matmul = "import torch\n\n\ndef f(a, b):\n    a = torch.zeros(64, 64)\n    b = torch.zeros(64, 64)\n    return a @ b\n"
    result = lint(matmul, {"execution": {"count": 2**63 - 1}})
    assert _found(result) == [
        "7:12 TCL404 too large to cost exactly: `a @ b` as executed needs 524288 FLOP per run × execution.count "
        "9223372036854775807, ≈ 4.8e24 FLOP, which exceeds 2**63−1 (≈ 9.22e18): no numbers are reported for this site"]


TWELVE_TERMS = ",".join("abcdefghijklm"[i:i + 2] for i in range(12)) + "->am"
TWELVE = f'''
import torch
from jaxtyping import Float
from torch import Tensor


def chain(x: Float[Tensor, "n n"]):
    return torch.einsum("{TWELVE_TERMS}", {", ".join(["x"] * 12)})
'''


def test_d3_twelve_operand_einsums(tmp_path):
    numpy_source = TWELVE.replace("import torch\n", "import numpy as np\n").replace(
        "from torch import Tensor\n", "").replace("Tensor,", "np.ndarray,").replace("torch.einsum", "np.einsum")
    result = lint(numpy_source, {"dims": {"n": 64}})
    assert [f.code for f in result.findings] == ["TCL403", "TCL404"]
    assert "as executed needs 12*n^13 FLOP with n=64, ≈ 3.6e24 FLOP" in result.findings[1].message
    assert "more than 9.22 EFLOP as executed vs 5.77 MFLOP" in result.findings[0].message
    # torch contracts left to right: eleven n^3 products, in range until n^3 passes the ceiling
    assert [f.code for f in lint(TWELVE, {"dims": {"n": 2**20}}).findings] == ["TCL404"]
    big = lint(TWELVE, {"dims": {"n": 2**20}}).findings[0].message
    assert "as executed needs 22*n^3 FLOP with n=1048576, ≈ 2.5e19 FLOP" in big
    (tmp_path / "twelve.py").write_text(TWELVE)
    ran = tensorcost_in(tmp_path, "check", "twelve.py", "--dim", "n=1048576", "--no-cache")
    assert ran.returncode == 1 and " TCL404 too large to cost exactly: " in ran.stdout


def test_d3_a_byte_count_past_the_range_is_named_when_the_flops_are_not():
    source = """
import torch
from jaxtyping import Float32
from torch import Tensor


def apply(a: Float32[Tensor, "m k"], v: Float32[Tensor, "k"]):
    return a @ v
"""
    # 2*m*k = 6.9e18 FLOP is in range; operand a holds 4*m*k = 1.4e19 bytes, which is not
    result = lint(source, {"dims": {"m": 3 * 2**30, "k": 2**30}})
    assert _found(result) == [
        "8:12 TCL404 too large to cost exactly: `a @ v`: its operand0 tensor size (with m=3221225472, k=1073741824) "
        "exceeds 2**63−1 (≈ 9.22e18): no numbers are reported for this site"]
