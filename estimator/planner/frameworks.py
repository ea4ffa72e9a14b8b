"""What each framework really executes for an einsum, and what it costs.

Sources (read from each library's code, versions in the docstrings of the reproductions):
- np.einsum: optimize=False is its default and runs one C loop over every index; True/'greedy'/
  'optimal'/['einsum_path', ...]/(name, limit) go through numpy.einsum_path with its default memory
  limit (the largest input or output).
- torch.einsum: contracts left to right unless opt_einsum is installed and
  torch.backends.opt_einsum.enabled, then opt_einsum.contract_path(strategy, default 'auto'); with
  two or fewer operands it never asks for a path.
- jnp.einsum: optimize='auto' by default, through opt_einsum.contract_path; True means 'optimal',
  False a fixed [(0, 1)] * (n-1) path.
- opt_einsum.contract: optimize='auto' by default; False is a single einsum over all operands.

Costs use one convention for every framework (orders.py). torch's C++ kernel also sums an index
that lives in one operand only before its pairwise step; that reduction is counted inside the step,
as opt_einsum counts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..errors import EinsumError
from . import numpy_paths, opt_einsum_paths
from .network import Network
from .orders import ContractionOrder, Path, normalize_path, order_cost, single_loop_order
from .strategies import STRATEGIES, best_order

FRAMEWORKS = ("numpy", "torch", "jax", "opt_einsum", "as-written")
TORCH_STRATEGIES = ("left-to-right", "opt-einsum")
_OPT_EINSUM_NAMES = ("auto", "optimal", "branch-all", "branch-2", "branch-1", "greedy", "eager", "opportunistic")


@dataclass(frozen=True, slots=True)
class FrameworkExecution:
    framework: str
    description: str  # the call modelled and how its path is chosen, in the user's words
    order: ContractionOrder | None
    flops: int


def _explicit(optimize, network: Network) -> Path | None:
    if isinstance(optimize, (list, tuple)) and optimize and not isinstance(optimize[0], str):
        return normalize_path(optimize, network.operand_count)
    return None


def _contract_path(network: Network, optimize, label: str) -> tuple[ContractionOrder, str]:
    """opt_einsum.contract_path(..., optimize=optimize) with no memory limit, as callers pass it."""
    n = network.operand_count
    explicit = _explicit(optimize, network)
    if explicit is not None:
        return order_cost(network, explicit, f"{label}:explicit"), "the explicit path given"
    if optimize is False:
        return order_cost(network, (tuple(range(n)),), f"{label}:single-einsum"), "one einsum over all operands"
    if isinstance(optimize, str):
        name = optimize.lower()
        if name not in _OPT_EINSUM_NAMES:
            raise EinsumError("optimize", f"opt_einsum strategy {optimize!r} is not modelled (modelled: {', '.join(_OPT_EINSUM_NAMES)})")
        if n <= 2:
            return order_cost(network, (tuple(range(n)),), f"{label}:{name}"), "nothing to order"
        chosen = opt_einsum_paths.auto_strategy(n) if name == "auto" else name
        inputs = [frozenset(term) for term in network.inputs]
        path = opt_einsum_paths.PATH_FUNCTIONS[chosen](inputs, frozenset(network.output), network.size_dict())
        how = f"opt_einsum {name!r}" + (f" (runs {chosen!r} at {n} operands)" if name == "auto" else "")
        return order_cost(network, path, f"{label}:{name}"), how
    raise EinsumError("optimize", f"expected a strategy name, False or an explicit path, got {optimize!r}")


def _numpy(network: Network, optimize) -> FrameworkExecution:
    if optimize is None or optimize is False:
        order = single_loop_order(network, "numpy:single-loop")
        return FrameworkExecution("numpy", "np.einsum(optimize=False), the default: one loop over every index", order, order.flops)
    path, how = numpy_paths.einsum_path(network, optimize)
    if len(path) == 1 and len(path[0]) == network.operand_count and network.operand_count > 1:
        order = order_cost(network, path, "numpy:single-einsum")
    else:
        name = (
            "greedy" if optimize is True
            else optimize if isinstance(optimize, str)
            else optimize[0] if isinstance(optimize[0], str) and optimize[0] != "einsum_path"
            else "explicit"
        )
        order = order_cost(network, path, f"numpy:{name}")
    return FrameworkExecution("numpy", f"np.einsum(optimize={optimize!r}): {how}", order, order.flops)


def _torch(network: Network, optimize, torch_strategy: str) -> FrameworkExecution:
    if torch_strategy not in TORCH_STRATEGIES:
        raise EinsumError("torch_strategy", f"expected one of {', '.join(TORCH_STRATEGIES)}, got {torch_strategy!r}")
    n = network.operand_count
    if torch_strategy == "left-to-right" or n <= 2:
        order = order_cost(network, STRATEGIES["left-to-right"](network, None), "torch:left-to-right")
        return FrameworkExecution("torch", "torch.einsum contracts left to right", order, order.flops)
    strategy = "auto" if optimize is None else optimize
    if strategy not in ("auto", "greedy", "optimal"):
        raise EinsumError("optimize", f"torch.backends.opt_einsum.strategy is auto, greedy or optimal, got {strategy!r}")
    order, how = _contract_path(network, strategy, "torch")
    return FrameworkExecution("torch", f"torch.einsum with opt_einsum enabled: {how}", order, order.flops)


def _jax(network: Network, optimize) -> FrameworkExecution:
    if optimize is False:
        if network.operand_count <= 2:
            order = order_cost(network, (tuple(range(network.operand_count)),), "jax:unoptimized")
        else:
            order = order_cost(network, STRATEGIES["pairs-from-left"](network, None), "jax:unoptimized")
        return FrameworkExecution("jax", "jnp.einsum(optimize=False): positions (0, 1) at every step", order, order.flops)
    strategy = "auto" if optimize is None else "optimal" if optimize is True else optimize
    order, how = _contract_path(network, strategy, "jax")
    return FrameworkExecution("jax", f"jnp.einsum(optimize={strategy!r}): {how}", order, order.flops)


def _opt_einsum(network: Network, optimize) -> FrameworkExecution:
    strategy = "auto" if optimize is None else optimize
    order, how = _contract_path(network, strategy, "opt_einsum")
    return FrameworkExecution("opt_einsum", f"opt_einsum.contract(optimize={strategy!r}): {how}", order, order.flops)


def _as_written(network: Network, optimize) -> FrameworkExecution:
    explicit = _explicit(optimize, network) if optimize is not None else None
    if explicit is None and optimize is not None:
        raise EinsumError("optimize", "pairwise code as written takes the path it spells out, e.g. [(0, 1), (0, 1)]")
    path = explicit or STRATEGIES["left-to-right"](network, None)
    order = order_cost(network, path, "as-written")
    how = "the pairwise steps as written" if explicit else "pairwise calls left to right, as written"
    return FrameworkExecution("as-written", how, order, order.flops)


def framework_execution(
    framework: str, network: Network, *, optimize=None, torch_strategy: str = "left-to-right"
) -> FrameworkExecution:
    """The order `framework` executes for `network` and its FLOPs.

    `optimize` is the call's own keyword as written (np.einsum/jnp.einsum/opt_einsum.contract), or
    torch.backends.opt_einsum.strategy for torch; None means the framework's default. Raises
    EinsumError for calls the framework itself would reject or that are not modelled, and
    CountOverflow when the executed order's counts pass 2**63-1.
    """
    if framework == "numpy":
        return _numpy(network, optimize)
    if framework == "torch":
        return _torch(network, optimize, torch_strategy)
    if framework == "jax":
        return _jax(network, optimize)
    if framework == "opt_einsum":
        return _opt_einsum(network, optimize)
    if framework == "as-written":
        return _as_written(network, optimize)
    raise EinsumError("framework", f"unknown framework {framework!r}; known: {', '.join(FRAMEWORKS)}")


def fix_argument(framework: str, path: Path) -> str:
    """The keyword that makes `framework` run `path` (for a finding's fix)."""
    steps = ", ".join(str(tuple(step)) for step in path)
    if framework == "numpy":
        return f"optimize=['einsum_path', {steps}]"
    if framework in ("jax", "opt_einsum"):
        return f"optimize=[{steps}]"
    if framework == "torch":
        return f"opt_einsum.contract(..., optimize=[{steps}]) or reorder the operands"
    return f"contract in the order {list(path)}"


@dataclass(frozen=True, slots=True)
class ContractionRegret:
    """What TCL403 reports: the executed order against the best one, and how to get the best."""

    executed: FrameworkExecution
    best: ContractionOrder
    ratio: Fraction  # executed FLOPs / best FLOPs, exact (compare with budgets.contraction_regret)
    fix: str


def contraction_regret(
    framework: str, network: Network, *, optimize=None, torch_strategy: str = "left-to-right"
) -> ContractionRegret:
    """The executed order's FLOPs over the best order's (exact DP while affordable, else greedy)."""
    executed = framework_execution(framework, network, optimize=optimize, torch_strategy=torch_strategy)
    best = best_order(network)
    fix = fix_argument(framework, best.path)
    if framework == "numpy" and network.operand_count <= numpy_paths.NUMPY_OPTIMAL_LIMIT:
        # numpy's own exhaustive search is the friendlier fix when it finds an equally cheap order
        if order_cost(network, numpy_paths.einsum_path(network, "optimal")[0]).flops == best.flops:
            fix = "optimize='optimal'"
    return ContractionRegret(executed, best, Fraction(executed.flops, best.flops), fix)
