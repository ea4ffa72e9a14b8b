"""The reproduced searches choose exactly the path opt_einsum and numpy.einsum_path choose."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estimator import EinsumError
from estimator.planner import build_network, opt_einsum_paths
from estimator.planner.numpy_paths import einsum_path
from tests.planner.random_networks import networks, shaped

oe = pytest.importorskip("opt_einsum")
np = pytest.importorskip("numpy")


def _library_arguments(subscripts, shapes):
    network = build_network(subscripts, shapes)
    return [frozenset(t) for t in network.inputs], frozenset(network.output), network.size_dict()


def _same(ours, theirs) -> bool:
    return [tuple(step) for step in ours] == [tuple(step) for step in theirs]


@settings(max_examples=120, deadline=None)
@given(networks(min_operands=3, max_operands=10, max_size=6), st.sampled_from(["branch-all", "branch-2", "branch-1", "greedy", "auto"]))
def test_opt_einsum_searches_are_reproduced(network, strategy):
    arguments = _library_arguments(*network)
    if strategy == "branch-all" and len(arguments[0]) > 8:
        strategy = "branch-2"  # keep the library's own search affordable
    theirs = oe.paths.get_path_fn(strategy)(*arguments, None)
    assert _same(opt_einsum_paths.PATH_FUNCTIONS[strategy](*arguments, None), theirs)


@settings(max_examples=80, deadline=None)
@given(networks(min_operands=3, max_operands=6, max_size=6))
def test_opt_einsum_optimal_is_reproduced(network):
    arguments = _library_arguments(*network)
    assert _same(opt_einsum_paths.optimal(*arguments, None), oe.paths.optimal(*arguments, None))


@settings(max_examples=80, deadline=None)
@given(networks(min_operands=3, max_operands=6, max_size=6), st.sampled_from(["optimal", "branch-2", "greedy"]),
       st.integers(1, 200))
def test_opt_einsum_memory_limited_searches_are_reproduced(network, strategy, limit):
    arguments = _library_arguments(*network)
    theirs = oe.paths.get_path_fn(strategy)(*arguments, limit)
    assert _same(opt_einsum_paths.PATH_FUNCTIONS[strategy](*arguments, limit), theirs)


@settings(max_examples=150, deadline=None)
@given(networks(min_operands=2, max_operands=8, max_size=6), st.sampled_from([True, "greedy", "optimal"]))
def test_numpy_einsum_path_is_reproduced(network, optimize):
    subscripts, shapes = network
    if optimize == "optimal" and len(shapes) > 6:
        optimize = "greedy"  # numpy's own enumeration is factorial
    theirs = np.einsum_path(subscripts, *shaped(shapes), optimize=optimize)[0][1:]
    ours, _ = einsum_path(build_network(subscripts, shapes), optimize)
    assert _same(ours, theirs)


@settings(max_examples=100, deadline=None)
@given(networks(min_operands=3, max_operands=6, max_size=6), st.sampled_from(["greedy", "optimal"]), st.integers(1, 300))
def test_numpy_memory_limit_tuples_are_reproduced(network, name, limit):
    subscripts, shapes = network
    theirs = np.einsum_path(subscripts, *shaped(shapes), optimize=(name, limit))[0][1:]
    ours, _ = einsum_path(build_network(subscripts, shapes), (name, limit))
    assert _same(ours, theirs)


def test_numpy_optimal_falls_back_to_one_loop_when_nothing_fits():
    subscripts, shapes = "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]
    theirs = np.einsum_path(subscripts, *shaped(shapes), optimize=("optimal", 1))[0][1:]
    ours, _ = einsum_path(build_network(subscripts, shapes), ("optimal", 1))
    assert _same(ours, theirs) and ours == ((0, 1, 2),)


def test_numpy_refusals_mirror_its_run_time_errors():
    network = build_network("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)])
    with pytest.raises(EinsumError, match="does not understand"):
        einsum_path(network, [(0, 1), (0, 1)])  # numpy wants 'einsum_path' first
    with pytest.raises(EinsumError, match="no path strategy"):
        einsum_path(network, "auto")
    big = build_network(",".join(f"a{chr(98 + i)}" for i in range(9)) + "->a", [(2, 3)] * 9)
    with pytest.raises(EinsumError, match="does not finish"):
        einsum_path(big, "optimal")


def test_ssa_to_linear_matches_opt_einsum():
    ssa = [(0, 3), (2, 4), (1, 5)]
    assert _same(opt_einsum_paths.ssa_to_linear(ssa), oe.paths.ssa_to_linear(ssa))
