"""`tensorcost plan` as users run it (in process: `main(argv)`), Contract 5's JSON, the text table, exit 2."""

from __future__ import annotations

import json

import pytest

from tests.conftest import assert_one_line_error, run_tensorcost

CHAIN = ["ij,jk,kl->il", "--shapes", "1000x1000,1000x64,64x10"]


def test_json_follows_contract_5():
    result = run_tensorcost("plan", *CHAIN, "--dtype", "float32", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(report)[:1] == ["subscripts"] and report["subscripts"] == "ij,jk,kl->il"
    best = report["orders"][report["optimal"]]
    assert report["optimal"] == 0
    assert best["path"] == [[1, 2], [0, 1]]
    assert best["flops"] == 21280000 and best["largest_intermediate"] == 10000
    assert isinstance(best["steps"], list) and len(best["steps"]) == 2
    assert {"numpy", "numpy-optimize", "torch", "jax"} <= set(report["frameworks"])
    assert [o["flops"] for o in report["orders"]] == sorted(o["flops"] for o in report["orders"])


def test_text_table_has_a_row_per_order_and_per_framework():
    result = run_tensorcost("plan", *CHAIN)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "search: exhaustive" in out
    assert "[(1, 2), (0, 1)]  21.3 MFLOP" in out
    assert "1.92 GFLOP" in out and "90.23" in out
    for name in ("numpy ", "numpy-optimize", "torch ", "torch-opt-einsum", "jax ", "opt_einsum"):
        assert "\n" + name in out
    order_rows = [line for line in out.splitlines() if line[:1].isdigit()]
    assert len(order_rows) == 3


def test_dims_bind_letters_and_output_file(tmp_path):
    target = tmp_path / "plan.json"
    result = run_tensorcost("plan", "ij,jk,kl->il", "--dim", "i=1000", "--dim", "j=1000", "--dim", "k=64",
                            "--dim", "l=10", "--format", "json", "--output", str(target))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert json.loads(target.read_text())["orders"][0]["flops"] == 21280000


def test_memory_limit_in_bytes_and_size_objective():
    args = ["ab,bc,cd,de->ae", "--shapes", "3x100,100x50,50x2,2x3", "--format", "json"]
    limited = json.loads(run_tensorcost("plan", *args, "--memory-limit", "600B").stdout)
    assert limited["memory_limit"] == 150
    assert limited["orders"][limited["optimal"]]["flops"] == 30636
    by_size = json.loads(run_tensorcost("plan", *args, "--minimize", "size").stdout)
    assert by_size["orders"][by_size["optimal"]]["largest_intermediate"] == 150


def test_many_operands_state_the_search():
    subscripts = ",".join(f"{chr(97 + i)}{chr(98 + i)}" for i in range(8)) + "->ai"
    shapes = ",".join("4x5" if i % 2 == 0 else "5x4" for i in range(8))
    result = run_tensorcost("plan", subscripts, "--shapes", shapes)
    assert result.returncode == 0, result.stderr
    assert "search: exact optimum by dynamic programming" in result.stdout


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["ij,jk->ik", "--shapes", "2x3,4x5"], ["index 'j' is bound to 3 and to 4"]),
        (["ij,jk->ik", "--shapes", "2x3"], ["2 subscript terms for 1 operands"]),
        (["ij,jk->iz", "--shapes", "2x3,3x4"], ["output index 'z'"]),
        (["ij,jk->ik", "--shapes", "2x3,3xq"], ["--shapes", "positive integer"]),
        (["ij,jk->ik", "--shapes", "2x3,3x0"], ["--shapes", "positive integer"]),
        (["ij,jk->ik"], ["--shapes", "operand sizes are needed"]),
        (["ij,jk->ik", "--shapes", "2x3,3x4", "--dim", "i=2"], ["either with --shapes or with --dim"]),
        (["ij,jk->ik", "--dim", "i=2", "--dim", "j=3"], ["no size given for index 'k'"]),
        (["ij,jk->ik", "--dim", "ij=2"], ["--dim", "LETTER=SIZE"]),
        (["ij,jk->ik", "--shapes", "2x3,3x4", "--dtype", "float7"], ["--dtype", "unknown dtype"]),
        (["ij,jk->ik", "--shapes", "2x3,3x4", "--memory-limit", "lots"], ["--memory-limit"]),
        (["ij,jk->ik", "--shapes", "2x3,3x4", "--memory-limit", "5"], ["smallest achievable largest intermediate is 8"]),
        (["ab,cd->abcd", "--shapes", "1048576x1048576,1048576x1048576"], ["count overflow"]),
        (["ij,jk->ik", "--shapes", "2x3,3x4", "--format", "yaml"], ["invalid choice"]),
        (["ij,jk->ik", "--shapes", "2x3,3x4", "--output", "/nonexistent-dir/x.json"], ["--output", "cannot write"]),
    ],
)
def test_bad_input_is_one_line_exit_2(args, fragments):
    assert_one_line_error(run_tensorcost("plan", *args), *fragments)
