"""order_cost against the libraries' own accounting, step by step, for the same path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estimator import CountOverflow, EinsumError
from estimator.planner import build_network, naive_flops, order_cost, single_loop_order
from tests.planner.random_networks import networks, paths, shaped

oe = pytest.importorskip("opt_einsum")
np = pytest.importorskip("numpy")
from numpy._core import einsumfunc  # noqa: E402  (numpy's own path code, to record its per-step costs)


def _recorder(original, calls):
    def record(*args):
        calls.append(original(*args))
        return calls[-1]

    return record


def test_worked_example_from_contract_5():
    network = build_network("ij,jk,kl->il", [(1000, 1000), (1000, 64), (64, 10)])
    order = order_cost(network, [(1, 2), (0, 1)])
    assert (order.flops, order.largest_intermediate) == (21280000, 10000)
    assert [s.subscripts for s in order.steps] == ["jk,kl->jl", "ij,jl->il"]
    assert [s.flops for s in order.steps] == [2 * 1000 * 64 * 10, 2 * 1000 * 1000 * 10]
    # live: the (j,l) intermediate alone, then it and the output together
    assert [s.live_elements for s in order.steps] == [10000, 20000]
    assert order.peak_live_elements == 20000


@settings(max_examples=150, deadline=None)
@given(data=st.data(), network=networks(max_operands=7))
def test_each_step_equals_opt_einsum_contract_path(data, network):
    subscripts, shapes = network
    path = data.draw(paths(len(shapes)))
    ours = order_cost(build_network(subscripts, shapes), path)
    calls: list[int] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(oe.helpers, "flop_count", _recorder(oe.helpers.flop_count, calls))
        _, info = oe.contract_path(subscripts, *shapes, shapes=True, optimize=path)
    naive, steps = calls[0], calls[1:]
    assert [s.flops for s in ours.steps] == steps
    assert [s.intermediate_elements for s in ours.steps] == list(info.size_list)
    assert ours.flops == info.opt_cost
    assert ours.largest_intermediate == info.largest_intermediate
    assert [set(s.subscripts.split("->")[1]) for s in ours.steps] == [
        set(c[2].split("->")[1]) for c in info.contraction_list
    ]
    assert naive_flops(build_network(subscripts, shapes)) == naive == info.naive_cost


@settings(max_examples=150, deadline=None)
@given(data=st.data(), network=networks(max_operands=7))
def test_each_step_equals_numpy_einsum_path(data, network):
    subscripts, shapes = network
    path = data.draw(paths(len(shapes)))
    ours = order_cost(build_network(subscripts, shapes), path)
    calls: list[int] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(einsumfunc, "_flop_count", _recorder(einsumfunc._flop_count, calls))
        chosen, printed = np.einsum_path(subscripts, *shaped(shapes), optimize=["einsum_path", *path])
    steps, naive = calls[:-1], calls[-1]
    assert [s.flops for s in ours.steps] == steps
    assert f"Largest intermediate:  {ours.largest_intermediate:.3e} elements" in printed
    assert naive_flops(build_network(subscripts, shapes)) == naive


def test_numpy_default_single_loop_is_the_naive_cost():
    network = build_network("ij,ij->ij", [(3, 4), (3, 4)])  # Hadamard: numpy still counts an 'inner' add
    info = oe.contract_path("ij,ij->ij", (3, 4), (3, 4), shapes=True)[1]
    order = single_loop_order(network)
    assert order.flops == naive_flops(network) == info.naive_cost == 24
    assert order.path == ((0, 1),) and order.largest_intermediate == 12


@pytest.mark.parametrize(
    "path, fragment",
    [
        ([], "non-empty"),
        ([(0, 1)], "leaves 2 operands"),
        ([(0, 3), (0, 1)], "out of range"),
        ([(1, 1), (0, 1)], "named twice"),
        ([(0, 1.0), (0, 1)], "must be ints"),
        ("01", "non-empty sequence"),
    ],
)
def test_bad_paths_are_refused(path, fragment):
    network = build_network("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)])
    with pytest.raises(EinsumError, match=fragment):
        order_cost(network, path)


def test_multi_operand_steps_cost_as_opt_einsum_counts_them():
    shapes = [(2, 3), (3, 4), (4, 5), (5, 6)]
    network = build_network("ij,jk,kl,lm->im", shapes)
    path = [(1, 2, 3), (0, 1)]
    info = oe.contract_path("ij,jk,kl,lm->im", *shapes, shapes=True, optimize=path)[1]
    assert order_cost(network, path).flops == info.opt_cost


def test_counts_over_the_ceiling_are_refused():
    network = build_network("ab,cd->abcd", [(2**20, 2**20), (2**20, 2**20)])
    with pytest.raises(CountOverflow):
        order_cost(network, [(0, 1)])
