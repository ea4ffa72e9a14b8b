"""`tensorcost plan`'s data: Contract 5's JSON document, built from the planner's records.

Besides the contract's keys (`subscripts`, `orders` with `path`/`flops`/`largest_intermediate`/
`steps`, `optimal`, `frameworks` with `numpy`/`numpy-optimize`/`torch`/`jax`), it adds bytes next to
every element count, the search that ran, and which strategies and frameworks chose each order.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Sequence

from ..counting import checked_product
from ..dtypes import normalize_dtype
from ..errors import CountOverflow, EinsumError
from .exact_search import EXACT_LIMIT, EXHAUSTIVE_LIMIT, enumerate_orders
from .frameworks import framework_execution
from .network import Network, build_network
from .orders import ContractionOrder, path_clusters
from .strategies import HEURISTICS, best_order, is_exact, search

# (report key, framework, keyword arguments): the calls a user is most likely to have written.
FRAMEWORK_MODELS = (
    ("numpy", "numpy", {}),
    ("numpy-optimize", "numpy", {"optimize": True}),
    ("torch", "torch", {}),
    ("torch-opt-einsum", "torch", {"torch_strategy": "opt-einsum"}),
    ("jax", "jax", {}),
    ("opt_einsum", "opt_einsum", {}),
)
# Named alternatives listed beside the optimum when there are too many orders to list them all.
ALTERNATIVES = ("greedy", "left-to-right", "opt_einsum:auto", "numpy:greedy")


def _ratio(flops: int, best: int) -> float:
    return float(round(Decimal(flops) / Decimal(best), 4))


def _step_json(step, itemsize: int) -> dict:
    return {
        "operands": list(step.operands),
        "subscripts": step.subscripts,
        "output_shape": list(step.output_shape),
        "flops": step.flops,
        "intermediate_elements": step.intermediate_elements,
        "intermediate_bytes": checked_product((step.intermediate_elements, itemsize), "intermediate_bytes"),
        "live_elements": step.live_elements,
        "live_bytes": checked_product((step.live_elements, itemsize), "live_bytes"),
    }


def _order_json(order: ContractionOrder, itemsize: int) -> dict:
    return {
        "path": [list(step) for step in order.path],
        "flops": order.flops,
        "largest_intermediate": order.largest_intermediate,
        "largest_intermediate_bytes": checked_product((order.largest_intermediate, itemsize), "bytes"),
        "peak_live_elements": order.peak_live_elements,
        "peak_live_bytes": checked_product((order.peak_live_elements, itemsize), "bytes"),
        "steps": [_step_json(step, itemsize) for step in order.steps],
    }


def _candidates(network: Network, best: ContractionOrder) -> tuple[list[ContractionOrder], int, dict]:
    """The orders to list, how many were refused for overflow, and the search's description."""
    n = network.operand_count
    if n <= EXHAUSTIVE_LIMIT:
        orders, refused = enumerate_orders(network)
        description = f"exhaustive: every pairwise order of {n} operands ({len(orders) + refused} orders)"
        return orders, refused, {"method": "exhaustive", "description": description}
    orders, refused = [best], 0
    for name in ALTERNATIVES:
        try:
            orders.append(search(network, name))
        except CountOverflow:
            refused += 1
    if is_exact(best):
        description = f"exact optimum by dynamic programming over the {2**n} operand subsets, plus named alternatives"
        method = "dynamic-programming"
    else:
        description = (f"heuristic: the exact search runs up to {EXACT_LIMIT} operands; {n} given: the cheapest of "
                       f"{', '.join(HEURISTICS)} (not proven optimal)")
        method = "heuristic"
    return orders, refused, {"method": method, "description": description}


def plan_report(
    subscripts: str,
    shapes: Sequence[Sequence[int]],
    dtype: str = "float32",
    *,
    minimize: str = "flops",
    memory_limit: int | None = None,
) -> dict:
    """Every order (or the optimum and named alternatives), the best, and each framework's order."""
    network = build_network(subscripts, shapes)
    itemsize = normalize_dtype(dtype).bytes
    best = best_order(network, minimize, memory_limit)
    listed, refused, search_info = _candidates(network, best)
    search_info["exact"] = is_exact(best)
    best_tree = path_clusters(best.path, network.operand_count)

    unique: dict[frozenset, ContractionOrder] = {}
    chosen_by: dict[frozenset, list[str]] = {}
    for order in listed:
        tree = path_clusters(order.path, network.operand_count)
        unique.setdefault(tree, order)
        if order.strategy != "exhaustive":
            chosen_by.setdefault(tree, []).append(order.strategy)
    chosen_by.setdefault(best_tree, [])
    if best.strategy not in chosen_by[best_tree]:
        chosen_by[best_tree].insert(0, best.strategy)

    frameworks: dict[str, dict] = {}
    executed: dict[str, frozenset | None] = {}
    for key, framework, arguments in FRAMEWORK_MODELS:
        try:
            execution = framework_execution(framework, network, **arguments)
        except (EinsumError, CountOverflow) as error:
            frameworks[key] = {"call": None, "path": None, "flops": None, "largest_intermediate": None,
                               "order": None, "ratio_to_optimal": None, "refused": str(error)}
            executed[key] = None
            continue
        order = execution.order
        frameworks[key] = {"call": execution.description, "path": [list(step) for step in order.path],
                           "flops": execution.flops, "largest_intermediate": order.largest_intermediate}
        executed[key] = path_clusters(order.path, network.operand_count)
        chosen_by.setdefault(executed[key], [])
        if executed[key] in unique:
            chosen_by[executed[key]].append(key)

    ranked = sorted(
        unique.items(),
        key=lambda item: (item[1].flops, item[1].largest_intermediate, item[0] != best_tree,
                          item[1].peak_live_elements, item[1].path),
    )
    orders_json, index_of = [], {}
    for tree, order in ranked:
        try:
            entry = _order_json(order, itemsize)
        except CountOverflow:
            if tree == best_tree:
                raise
            refused += 1
            continue
        entry["ratio_to_optimal"] = _ratio(order.flops, best.flops)
        entry["chosen_by"] = chosen_by.get(tree, [])
        if memory_limit is not None:
            entry["within_memory_limit"] = order.largest_intermediate <= memory_limit
        index_of[tree] = len(orders_json)
        orders_json.append(entry)
    for key, tree in executed.items():
        if tree is not None:
            frameworks[key]["order"] = index_of.get(tree)
            frameworks[key]["ratio_to_optimal"] = _ratio(frameworks[key]["flops"], best.flops)

    search_info["orders_refused_for_overflow"] = refused
    return {
        "subscripts": subscripts,
        "canonical": network.canonical,
        "shapes": [list(shape) for shape in network.shapes],
        "dtype": normalize_dtype(dtype).name,
        "minimize": minimize,
        "memory_limit": memory_limit,
        "search": search_info,
        "broadcasts": [{"index": label, "sizes": [a, b]} for label, a, b in network.broadcasts],
        "orders": orders_json,
        "optimal": index_of[best_tree],
        "frameworks": frameworks,
    }
