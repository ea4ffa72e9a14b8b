"""plan_report: Contract 5's document from the planner's records."""

from __future__ import annotations

import json

import pytest

from estimator import CountOverflow, EinsumError
from estimator.planner import plan_report

CHAIN = ("ij,jk,kl->il", [(1000, 1000), (1000, 64), (64, 10)])


def test_contract_5_example():
    report = plan_report(*CHAIN)
    assert report["subscripts"] == "ij,jk,kl->il"
    assert report["optimal"] == 0
    best = report["orders"][0]
    assert best["path"] == [[1, 2], [0, 1]]
    assert (best["flops"], best["largest_intermediate"]) == (21280000, 10000)
    assert [o["flops"] for o in report["orders"]] == sorted(o["flops"] for o in report["orders"])
    assert len(report["orders"]) == 3
    assert {"numpy", "numpy-optimize", "torch", "jax"} <= set(report["frameworks"])
    assert report["frameworks"]["numpy"]["flops"] == 1920000000
    assert report["frameworks"]["torch"]["order"] == 1
    assert report["frameworks"]["jax"]["order"] == 0
    step = best["steps"][0]
    assert step["intermediate_bytes"] == 4 * step["intermediate_elements"]
    assert report["search"]["method"] == "exhaustive"
    json.dumps(report)  # plain JSON types only


def test_dtype_scales_bytes_only():
    report = plan_report(*CHAIN, dtype="bf16")
    assert report["dtype"] == "bfloat16"
    assert report["orders"][0]["largest_intermediate_bytes"] == 20000


def test_size_objective_and_memory_limit_move_the_best_index():
    # fewest FLOPs builds a 100x2 intermediate; the smallest-intermediate order pays 44% more FLOPs
    subscripts, shapes = "ab,bc,cd,de->ae", [(3, 100), (100, 50), (50, 2), (2, 3)]
    by_flops = plan_report(subscripts, shapes)
    by_size = plan_report(subscripts, shapes, minimize="size")
    assert by_flops["optimal"] == 0
    best_flops = by_flops["orders"][0]
    assert (best_flops["flops"], best_flops["largest_intermediate"]) == (21236, 200)
    best_size = by_size["orders"][by_size["optimal"]]
    assert by_size["optimal"] > 0
    assert (best_size["flops"], best_size["largest_intermediate"]) == (30636, 150)
    limited = plan_report(subscripts, shapes, memory_limit=150)
    chosen = limited["orders"][limited["optimal"]]
    assert chosen["within_memory_limit"] and chosen["flops"] == 30636
    assert not limited["orders"][0]["within_memory_limit"]


def test_many_operands_list_the_optimum_and_named_alternatives():
    n = 9
    subscripts = ",".join(f"{chr(97 + i)}{chr(98 + i)}" for i in range(n)) + f"->a{chr(97 + n)}"
    shapes = [(2 + (i * 7) % 13, 2 + ((i + 1) * 7) % 13) for i in range(n)]
    report = plan_report(subscripts, shapes)
    assert report["search"]["method"] == "dynamic-programming"
    names = {name for order in report["orders"] for name in order["chosen_by"]}
    assert {"optimal", "greedy", "left-to-right"} <= names
    assert report["orders"][report["optimal"]]["ratio_to_optimal"] == 1.0
    for model in ("torch", "torch-opt-einsum", "jax", "numpy-optimize"):
        assert report["frameworks"][model]["order"] is not None


def test_overflowing_orders_are_left_out_and_counted():
    # the outer product of the two big operands overflows; the sensible orders do not
    report = plan_report("ab,cd,bd->ac", [(2**20, 2**20), (2**20, 2**20), (2**20, 2**20)])
    assert report["search"]["orders_refused_for_overflow"] >= 1
    assert report["frameworks"]["numpy"]["flops"] is None and "overflow" in report["frameworks"]["numpy"]["refused"]


def test_refusals_propagate():
    with pytest.raises(EinsumError):
        plan_report("ij,jk->ik", [(2, 3), (4, 5)])
    with pytest.raises(CountOverflow):
        plan_report("ab,cd->abcd", [(2**20, 2**20), (2**20, 2**20)])


def test_beyond_the_exact_limit_heuristics_run_and_say_so():
    from estimator.planner import EXACT_LIMIT, SearchLimit, build_network, optimal_order

    n = EXACT_LIMIT + 2
    subscripts = ",".join(f"{chr(97 + i)}{chr(98 + i)}" for i in range(n)) + f"->a{chr(97 + n)}"
    shapes = [(3 + i % 4, 3 + (i + 1) % 4) for i in range(n)]
    report = plan_report(subscripts, shapes)
    assert report["search"]["method"] == "heuristic" and report["search"]["exact"] is False
    assert "exact search runs up to" in report["search"]["description"]
    assert report["orders"][report["optimal"]]["flops"] == min(order["flops"] for order in report["orders"])
    with pytest.raises(SearchLimit):
        optimal_order(build_network(subscripts, shapes))


def test_scalars_ellipsis_and_single_operands():
    assert plan_report("ij,->ij", [(2, 3), ()])["orders"][0]["flops"] == 6
    ellipsis = plan_report("...ij,...jk", [(8, 2, 3), (3, 4)])
    assert ellipsis["orders"][0]["steps"][0]["output_shape"] == [8, 2, 4]
    single = plan_report("ij->i", [(3, 4)])
    assert single["orders"][0]["path"] == [[0]] and single["frameworks"]["numpy"]["flops"] == 12
