"""D8 (issue 15): einsums past the exact search's operand limit are costed with the cheapest order the
heuristic searches find, named as the best found, not the optimum — never TCL900."""

from __future__ import annotations

import json

from estimator.planner import EXACT_LIMIT
from tensorcost_lint.cli.main import main
from tests.lint.helpers import lint

LETTERS = "abcdefghijklmnopq"
# Sixteen links: fifteen (n, n) matrices then a vector. torch contracts left to right (fifteen
# n^3 matrix products); multiplying the vector in first needs only n^2 per step.
CHAIN = ",".join(LETTERS[i] + LETTERS[i + 1] for i in range(15)) + ",p->a"
SOURCE = f'''
import torch
from jaxtyping import Float
from torch import Tensor


def apply(x: Float[Tensor, "n n"], v: Float[Tensor, "n"]):
    return torch.einsum("{CHAIN}", {", ".join(["x"] * 15)}, v)
'''


def test_d8_sixteen_operand_einsum_is_costed_by_heuristics_not_tcl900():
    assert EXACT_LIMIT == 15
    result = lint(SOURCE, {"dims": {"n": 1024}})
    assert [f.code for f in result.findings] == ["TCL403"]
    message = result.findings[0].message
    # 14 products of 1024^3 (2 FLOPs each) then one 1024x1024 by vector; the best found is 15 matvecs
    assert "torch.einsum contracts left to right" in message
    assert ("30.1 GFLOP vs 31.5 MFLOP for the best order found (heuristic search; the exact search runs up to "
            "15 operands)") in message


def test_d8_seventeen_operand_einsum_with_equal_orders_passes_quietly():
    terms = ",".join(LETTERS[i] + LETTERS[i + 1] for i in range(16))
    source = f'''
import torch
from jaxtyping import Float
from torch import Tensor


def apply(x: Float[Tensor, "n n"]):
    return torch.einsum("{terms}->aq", {", ".join(["x"] * 16)})
'''
    result = lint(source, {"dims": {"n": 64}})
    assert [f.code for f in result.findings] == []
    assert result.sites and result.sites[0].cost.resolved


def test_d8_plan_names_the_best_found_order_above_the_exact_limit(capsys):
    shapes = ",".join(["1024x1024"] * 15 + ["1024"])
    assert main(["plan", CHAIN, "--shapes", shapes]) == 0
    out = capsys.readouterr().out
    assert ("search: heuristic: the exact search runs up to 15 operands; 16 given: the cheapest of greedy, "
            "opt_einsum:branch-1, numpy:greedy, left-to-right (not proven optimal)\n") in out
    assert "best found: order 0 (fewest FLOPs among the orders searched; not proven optimal)\n" in out
    assert main(["plan", CHAIN, "--shapes", shapes, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["search"]["exact"] is False and report["search"]["method"] == "heuristic"
    best = report["orders"][report["optimal"]]
    assert best["flops"] == min(order["flops"] for order in report["orders"])
    assert report["frameworks"]["torch"]["ratio_to_optimal"] > 900
