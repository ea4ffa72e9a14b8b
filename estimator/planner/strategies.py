"""The one table of named path strategies, opt_einsum style: each is a plain function
`(network, memory_limit) -> path`, looked up by name; `search` costs what it returns.

Names without a prefix are ours ('optimal' is the exact DP, 'greedy' is opt_einsum's greedy, the
named alternative everyone knows); prefixed names reproduce a library's own search exactly.
"""

from __future__ import annotations

from typing import Callable

from ..errors import CountOverflow, EinsumError
from . import numpy_paths, opt_einsum_paths
from .exact_search import EXACT_LIMIT, optimal_order
from .network import Network
from .orders import ContractionOrder, Path, left_to_right_path, order_cost

PathFunction = Callable[[Network, "int | None"], Path]


def _library_arguments(network: Network):
    return [frozenset(term) for term in network.inputs], frozenset(network.output), network.size_dict()


def _opt_einsum(name: str) -> PathFunction:
    def search(network: Network, memory_limit: int | None) -> Path:
        found = opt_einsum_paths.PATH_FUNCTIONS[name](*_library_arguments(network), memory_limit)
        return tuple(tuple(step) for step in found)

    search.__doc__ = f"opt_einsum's {name!r} search, reproduced."
    return search


def _numpy(name: str) -> PathFunction:
    def search(network: Network, memory_limit: int | None) -> Path:
        optimize = name if memory_limit is None else (name, memory_limit)
        return numpy_paths.einsum_path(network, optimize)[0]

    search.__doc__ = f"numpy.einsum_path(optimize={name!r}), reproduced (its default memory limit applies)."
    return search


def optimal(network: Network, memory_limit: int | None) -> Path:
    """Exact minimum FLOPs by DP over operand subsets."""
    return optimal_order(network, "flops", memory_limit).path


def optimal_size(network: Network, memory_limit: int | None) -> Path:
    """Exact minimum largest intermediate, then minimum FLOPs."""
    return optimal_order(network, "size", memory_limit).path


def left_to_right(network: Network, memory_limit: int | None) -> Path:
    """((A·B)·C)·D — torch.einsum without opt_einsum, and chained pairwise code as written."""
    return left_to_right_path(network.operand_count)


def pairs_from_left(network: Network, memory_limit: int | None) -> Path:
    """Always positions (0, 1): jnp.einsum(optimize=False) ((A·B), then (C·D), then ...)."""
    n = network.operand_count
    return ((0,),) if n == 1 else ((0, 1),) * (n - 1)


STRATEGIES: dict[str, PathFunction] = {
    "optimal": optimal,
    "optimal-size": optimal_size,
    "greedy": _opt_einsum("greedy"),
    "left-to-right": left_to_right,
    "pairs-from-left": pairs_from_left,
    **{f"opt_einsum:{name}": _opt_einsum(name) for name in ("auto", "optimal", "branch-all", "branch-2", "branch-1", "greedy")},
    "numpy:greedy": _numpy("greedy"),
    "numpy:optimal": _numpy("optimal"),
}


def search(network: Network, strategy: str, memory_limit: int | None = None) -> ContractionOrder:
    """Run a named strategy and cost the path it returns."""
    if strategy not in STRATEGIES:
        raise EinsumError("strategy", f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    return order_cost(network, STRATEGIES[strategy](network, memory_limit), strategy)


def greedy_order(network: Network, memory_limit: int | None = None) -> ContractionOrder:
    """opt_einsum's greedy (under a memory limit it switches to branch-1, as opt_einsum does)."""
    return search(network, "greedy", memory_limit)


# Past the exact limit: cheap searches, each polynomial in the operand count, whose blind spots
# differ (greedy alone costs a 15-matrix-and-vector chain at 478x what branch-1 finds).
HEURISTICS = ("greedy", "opt_einsum:branch-1", "numpy:greedy", "left-to-right")
BRANCH_LIMIT = 40  # branch-1 grows ~cubically: 0.04 s at 40 operands, 0.7 s at 100; hostile input stays bounded


def is_exact(order: ContractionOrder) -> bool:
    """Whether the order is the proven optimum (the DP ran), not the best a heuristic found."""
    return order.strategy in ("optimal", "optimal-size")


def best_order(network: Network, minimize: str = "flops", memory_limit: int | None = None) -> ContractionOrder:
    """The exact optimum while the DP is affordable; beyond it the cheapest order the HEURISTICS
    find (within memory_limit where one fits). `strategy` says which search found it."""
    if network.operand_count <= EXACT_LIMIT:
        return optimal_order(network, minimize, memory_limit)
    found = []
    for name in HEURISTICS:
        if name.startswith("opt_einsum:branch") and network.operand_count > BRANCH_LIMIT:
            continue
        try:
            order = search(network, name, memory_limit)
        except CountOverflow:
            continue
        if memory_limit is None or order.largest_intermediate <= memory_limit:
            found.append(order)
    if not found:
        return greedy_order(network, memory_limit)
    if minimize == "size":
        return min(found, key=lambda o: (o.largest_intermediate, o.flops))
    return min(found, key=lambda o: (o.flops, o.largest_intermediate))
