"""Exhaustive enumeration and the exact DP optimum: complete, exact, never beaten."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from estimator import EinsumError
from estimator.planner import (
    SearchLimit,
    all_orders,
    best_order,
    build_network,
    enumerate_orders,
    greedy_order,
    optimal_order,
    path_clusters,
)
from tests.planner.random_networks import networks

oe = pytest.importorskip("opt_einsum")

CHAIN = ("ij,jk,kl->il", [(1000, 1000), (1000, 64), (64, 10)])


def _double_factorial(k: int) -> int:
    return 1 if k <= 1 else k * _double_factorial(k - 2)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_every_contraction_tree_is_listed_once(n):
    subscripts = ",".join(f"a{chr(98 + i)}" for i in range(n)) + "->a"
    network = build_network(subscripts, [(2, 3)] * n)
    orders = all_orders(network)
    assert len(orders) == _double_factorial(2 * n - 3)  # (2n-3)!! binary trees over n leaves
    assert len({path_clusters(o.path, n) for o in orders}) == len(orders)
    assert [o.flops for o in orders] == sorted(o.flops for o in orders)


def test_contract_5_example_best_order():
    network = build_network(*CHAIN)
    best = optimal_order(network)
    assert best.path == ((1, 2), (0, 1))
    assert (best.flops, best.largest_intermediate) == (21280000, 10000)
    assert all_orders(network)[0].path == best.path


@settings(max_examples=120, deadline=None)
@given(networks(min_operands=2, max_operands=6))
def test_dp_optimum_equals_the_exhaustive_minimum(network):
    built = build_network(*network)
    orders = all_orders(built)
    best = optimal_order(built)
    assert best.flops == min(o.flops for o in orders)
    cheapest = [o for o in orders if o.flops == best.flops]
    assert best.largest_intermediate == min(o.largest_intermediate for o in cheapest)
    smallest = optimal_order(built, minimize="size")
    floor = min(o.largest_intermediate for o in orders)
    assert smallest.largest_intermediate == floor
    assert smallest.flops == min(o.flops for o in orders if o.largest_intermediate == floor)


@settings(max_examples=300, deadline=None)
@given(networks(min_operands=3, max_operands=7, max_size=10))
def test_never_worse_than_opt_einsum_optimal(network):
    subscripts, shapes = network
    ours = optimal_order(build_network(subscripts, shapes))
    theirs = oe.contract_path(subscripts, *shapes, shapes=True, optimize="optimal")[1]
    assert ours.flops <= theirs.opt_cost


@settings(max_examples=60, deadline=None)
@given(networks(min_operands=3, max_operands=6))
def test_memory_limit_is_respected_and_exact(network):
    built = build_network(*network)
    orders = all_orders(built)
    limit = sorted(o.largest_intermediate for o in orders)[len(orders) // 2]
    limited = optimal_order(built, memory_limit=limit)
    assert limited.largest_intermediate <= limit
    assert limited.flops == min(o.flops for o in orders if o.largest_intermediate <= limit)


def test_unreachable_memory_limit_is_refused_with_the_floor():
    network = build_network(*CHAIN)
    with pytest.raises(EinsumError, match="smallest achievable largest intermediate is 10000"):
        optimal_order(network, memory_limit=9999)
    with pytest.raises(EinsumError, match="positive number of elements"):
        optimal_order(network, memory_limit=0)
    with pytest.raises(EinsumError, match="minimize"):
        optimal_order(network, minimize="time")


def test_outer_products_are_searched_when_they_win():
    # two vectors times a large tensor: the outer product of the vectors first is cheapest
    network = build_network("i,j,ijk->k", [(2,), (2,), (2, 2, 1000)])
    orders = all_orders(network)
    best = optimal_order(network)
    assert best.flops == orders[0].flops
    assert best.path[0] == (0, 1)  # i x j, an outer product


def test_limits_name_the_search_that_ran():
    many = ",".join(f"a{chr(98 + i)}" for i in range(7)) + "->a"
    network = build_network(many, [(2, 3)] * 7)
    with pytest.raises(SearchLimit):
        all_orders(network)
    assert enumerate_orders(build_network("ab,bc->ac", [(2, 3), (3, 4)]))[1] == 0
    assert best_order(network).strategy == "optimal"
    assert greedy_order(network).strategy == "greedy"


def test_single_operand_is_one_step():
    network = build_network("ij->i", [(3, 4)])
    assert optimal_order(network).path == ((0,),)
    assert [o.path for o in all_orders(network)] == [((0,),)]
