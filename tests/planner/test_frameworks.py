"""Framework models against what the frameworks themselves choose (and, for torch, execute)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estimator import EinsumError
from estimator.planner import build_network, fix_argument, framework_execution, naive_flops
from tests.planner.random_networks import networks, shaped

oe = pytest.importorskip("opt_einsum")
np = pytest.importorskip("numpy")

CHAIN = ("ij,jk,kl->il", [(1000, 1000), (1000, 64), (64, 10)])


def _path(order):
    return [tuple(step) for step in order.path]


@settings(max_examples=100, deadline=None)
@given(networks(min_operands=2, max_operands=7, max_size=6))
def test_numpy_default_is_one_loop_at_the_naive_cost(network):
    subscripts, shapes = network
    execution = framework_execution("numpy", build_network(subscripts, shapes))
    assert execution.flops == oe.contract_path(subscripts, *shapes, shapes=True)[1].naive_cost
    assert execution.order.path == (tuple(range(len(shapes))),)


@settings(max_examples=100, deadline=None)
@given(networks(min_operands=2, max_operands=7, max_size=6), st.sampled_from([True, "greedy", "optimal"]))
def test_numpy_optimize_follows_einsum_path(network, optimize):
    subscripts, shapes = network
    if optimize == "optimal" and len(shapes) > 6:
        optimize = True
    chosen = np.einsum_path(subscripts, *shaped(shapes), optimize=optimize)[0][1:]
    execution = framework_execution("numpy", build_network(subscripts, shapes), optimize=optimize)
    assert _path(execution.order) == [tuple(step) for step in chosen]


def test_numpy_explicit_path_is_run_as_given():
    network = build_network(*CHAIN)
    execution = framework_execution("numpy", network, optimize=["einsum_path", (1, 2), (0, 1)])
    assert execution.flops == 21280000


@settings(max_examples=100, deadline=None)
@given(networks(min_operands=2, max_operands=10, max_size=6))
def test_jax_and_opt_einsum_default_to_opt_einsum_auto(network):
    subscripts, shapes = network
    chosen = oe.contract_path(subscripts, *shapes, shapes=True, optimize="auto")[0]
    built = build_network(subscripts, shapes)
    for framework in ("jax", "opt_einsum"):
        assert _path(framework_execution(framework, built).order) == [tuple(step) for step in chosen]
    torch_model = framework_execution("torch", built, torch_strategy="opt-einsum")
    if len(shapes) > 2:
        assert _path(torch_model.order) == [tuple(step) for step in chosen]


def test_jax_keywords():
    network = build_network("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 6)])
    assert framework_execution("jax", network, optimize=False).order.path == ((0, 1), (0, 1), (0, 1))
    optimal = oe.contract_path("ab,bc,cd,de->ae", (2, 3), (3, 4), (4, 5), (5, 6), shapes=True, optimize="optimal")[0]
    assert _path(framework_execution("jax", network, optimize=True).order) == [tuple(s) for s in optimal]
    assert framework_execution("opt_einsum", network, optimize=False).order.path == ((0, 1, 2, 3),)
    with pytest.raises(EinsumError, match="not modelled"):
        framework_execution("opt_einsum", network, optimize="dp")


def test_torch_left_to_right_and_as_written():
    network = build_network(*CHAIN)
    torch_model = framework_execution("torch", network)
    assert torch_model.order.path == ((0, 1), (0, 1)) and torch_model.flops == 129280000
    assert framework_execution("as-written", network).flops == 129280000
    assert framework_execution("as-written", network, optimize=[(1, 2), (0, 1)]).flops == 21280000
    with pytest.raises(EinsumError, match="torch_strategy"):
        framework_execution("torch", network, torch_strategy="fastest")
    with pytest.raises(EinsumError, match="unknown framework"):
        framework_execution("tensorflow", network)


def _summed_flops(order) -> int:
    """FLOPs of the steps torch runs as (batched) matmuls; FlopCounterMode counts only those."""
    total = 0
    for step in order.steps:
        inputs, output = step.subscripts.split("->")
        if set(inputs.replace(",", "")) - set(output):
            total += step.flops
    return total


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(2, 64), min_size=4, max_size=7), st.booleans())
def test_torch_executes_the_modelled_order(sizes, batched):
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    letters = "abcdefgh"
    terms = [("z" if batched else "") + letters[i] + letters[i + 1] for i in range(len(sizes) - 1)]
    subscripts = ",".join(terms) + "->" + ("z" if batched else "") + letters[0] + letters[len(sizes) - 1]
    shapes = [((3,) if batched else ()) + (sizes[i], sizes[i + 1]) for i in range(len(sizes) - 1)]
    network = build_network(subscripts, shapes)
    tensors = [torch.empty(shape, device="meta") for shape in shapes]
    for enabled, strategy in ((False, "left-to-right"), (True, "opt-einsum")):
        with torch.backends.opt_einsum.flags(enabled=enabled), FlopCounterMode(display=False) as counter:
            torch.einsum(subscripts, *tensors)
        model = framework_execution("torch", network, torch_strategy=strategy)
        assert counter.get_total_flops() == _summed_flops(model.order), (strategy, subscripts, shapes)


def test_fix_arguments_spell_the_path_per_framework():
    path = ((1, 2), (0, 1))
    assert fix_argument("numpy", path) == "optimize=['einsum_path', (1, 2), (0, 1)]"
    assert fix_argument("jax", path) == "optimize=[(1, 2), (0, 1)]"
    assert "opt_einsum.contract" in fix_argument("torch", path)


def test_naive_flops_matches_numpy_single_loop_print():
    network = build_network(*CHAIN)
    assert naive_flops(network) == 3 * 1000 * 1000 * 64 * 10


def test_regret_gives_tcl403_both_costs_the_ratio_and_a_fix():
    from fractions import Fraction

    from estimator.planner import contraction_regret

    network = build_network(*CHAIN)
    regret = contraction_regret("torch", network)
    assert (regret.executed.flops, regret.best.flops) == (129280000, 21280000)
    assert regret.ratio == Fraction(129280000, 21280000)
    assert "(1, 2), (0, 1)" in regret.fix
    assert contraction_regret("numpy", network).fix == "optimize='optimal'"
    assert contraction_regret("jax", network).ratio == 1
