"""The contraction planner: every order of an einsum, the exact optimum, and what each framework
really executes. Standard library only, exact ints; counts above 2**63-1 are refused.

Modules by concern: `network` (subscripts bound to shapes), `orders` (records and the cost of a
path), `exact_search` (every order; DP optimum), `strategies` (the table of named searches),
`opt_einsum_paths` / `numpy_paths` (those libraries' own choices, reproduced), `frameworks` (what
np/torch/jnp/opt_einsum run), `report` (Contract 5's JSON).
"""

from .exact_search import EXACT_LIMIT, EXHAUSTIVE_LIMIT, SearchLimit, all_orders, enumerate_orders, optimal_order
from .frameworks import (
    FRAMEWORKS,
    ContractionRegret,
    FrameworkExecution,
    contraction_regret,
    fix_argument,
    framework_execution,
)
from .network import Network, build_network, network_from_dims
from .orders import (
    ContractionOrder,
    ContractionStep,
    left_to_right_path,
    naive_flops,
    normalize_path,
    order_cost,
    path_clusters,
    single_loop_order,
    tree_path,
)
from .report import plan_report
from .strategies import HEURISTICS, STRATEGIES, best_order, greedy_order, is_exact, search

__all__ = [name for name in dir() if not name.startswith("_")]
