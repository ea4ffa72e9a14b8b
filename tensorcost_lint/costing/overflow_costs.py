"""Sites whose counts pass 2**63-1: what they would cost, recounted with unbounded ints (issue 15 D3).

The estimator refuses any count above 2**63-1 before it reports a number, so such a site has no
numbers; it must still be heard of, the larger the problem the louder. Here the executed FLOPs are
recounted along the same path the framework executes (Python ints never wrap; the result is only
ever shown approximately, never used as a count) and stated as a typed fact, CountTooLarge. The
einsum's network is kept, since its best order may well be in range for TCL403.
"""

from __future__ import annotations

from dataclasses import dataclass

from estimator import EstimatorError
from estimator.contraction import flops_per_point
from estimator.planner import STRATEGIES, Network, build_network, framework_execution, left_to_right_path, normalize_path
from estimator.planner import numpy_paths, opt_einsum_paths
from shape_annotations import Polynomial, ShapeError

from ..analysis.problems import CountTooLarge
from .cost_steps import attention_polynomial, planned_framework, relabel

_SINGLE_EINSUM = "single einsum"  # a path of one step over every operand


@dataclass(frozen=True)
class TooLarge:
    fact: CountTooLarge
    network: Network | None = None  # a multi-operand einsum's network, for its best order
    execution: object = None  # its FrameworkExecution, when the executed order itself is in range


def too_large(site, bound_shapes, sizes, settings, error: EstimatorError) -> TooLarge:
    """The fact for a site the estimator refused with CountOverflow (`error`)."""
    model = site.shapes
    runs = settings.execution.count
    network = execution = None
    if model.attention:
        formula = attention_polynomial(model, bool(site.attention.is_causal))
        once = None if formula is None else _unbounded(formula, sizes)
    else:
        inputs, output, table = relabel(model)
        back = {letter: model.dims[label] for label, letter in table.items()}
        bound = {}
        for term, shape in zip(inputs, bound_shapes):
            bound.update(zip(term, shape))
        path = (tuple(range(len(inputs))),)
        if len(inputs) > 2:
            network, execution, path = _executed(site, inputs, output, bound_shapes, settings)
        once, formula = _recount(inputs, output, bound, back, path)
    flops = None if once is None else once * runs
    named = () if formula is None else tuple((a, sizes[a]) for a in formula.atoms() if a in sizes)
    fact = CountTooLarge(site.expression, error.field, flops, formula, named, runs)
    return TooLarge(fact, network, execution)


def _executed(site, inputs, output, bound_shapes, settings):
    """(network, execution or None, path or None): the path the framework runs, found without the
    ceiling when costing it overflowed. None for the path when it cannot be known."""
    try:
        network = build_network(",".join(inputs) + "->" + output, bound_shapes)
    except EstimatorError:
        return None, None, None
    framework = planned_framework(site)
    optimize = site.einsum.optimize if site.einsum else None
    try:
        execution = framework_execution(framework, network, optimize=optimize, torch_strategy=settings.torch_einsum)
        return network, execution, execution.order.path
    except EstimatorError:
        pass
    try:
        return network, None, _path(framework, network, optimize, settings.torch_einsum)
    except (EstimatorError, KeyError, TypeError, ValueError):
        return network, None, None


def _path(framework: str, network: Network, optimize, torch_strategy: str):
    """frameworks.py's choice of path, without costing it."""
    n = network.operand_count
    if isinstance(optimize, (list, tuple)) and optimize and not isinstance(optimize[0], str):
        return normalize_path(optimize, n)
    if framework == "numpy":
        if optimize is None or optimize is False:
            return _SINGLE_EINSUM
        return numpy_paths.einsum_path(network, optimize)[0]
    if framework == "torch" and (torch_strategy == "left-to-right" or n <= 2):
        return left_to_right_path(n)
    if framework == "jax" and optimize is False:
        return STRATEGIES["pairs-from-left"](network, None)
    strategy = "auto" if optimize is None else "optimal" if optimize is True and framework == "jax" else optimize
    if strategy is False:
        return (tuple(range(n)),)
    name = opt_einsum_paths.auto_strategy(n) if strategy == "auto" else strategy
    inputs = [frozenset(term) for term in network.inputs]
    return opt_einsum_paths.PATH_FUNCTIONS[name](inputs, frozenset(network.output), network.size_dict())


def _recount(inputs, output, bound, back, path):
    """(FLOPs once, their Polynomial) along `path`, counted as orders.order_cost and numpy's single
    loop count them, without the ceiling."""
    if path is None:
        return None, None
    if path == _SINGLE_EINSUM:
        labels = list(dict.fromkeys("".join(inputs)))
        inner = sum(len(set(term)) for term in inputs) > len(labels)
        return _step(labels, max(1, len(inputs) - 1) + (1 if inner else 0), bound, back)
    current, steps = list(inputs), normalize_path(path, len(inputs))
    total, formula = 0, Polynomial.const(0)
    for number, positions in enumerate(steps):
        taken = [current[p] for p in positions]
        rest = [term for index, term in enumerate(current) if index not in positions]
        contracted = list(dict.fromkeys("".join(taken)))
        if number == len(steps) - 1:
            result = output
        else:
            keep = set(output).union(*rest)
            result = "".join(label for label in contracted if label in keep)
        flops, poly = _step(contracted, flops_per_point(len(positions), len(result) < len(contracted)), bound, back)
        total += flops
        formula = None if formula is None or poly is None else _plus(formula, poly)
        current = rest + [result]
    return total, formula


def _step(labels, factor: int, bound, back):
    flops = factor
    for label in labels:
        flops *= bound[label]
    try:
        poly = Polynomial.from_dims([back[label] for label in labels])
        return flops, None if poly is None else poly * factor
    except ShapeError:  # past the polynomial's term limit: no formula, the count stands
        return flops, None


def _plus(formula: Polynomial, poly: Polynomial) -> Polynomial | None:
    try:
        return formula + poly
    except ShapeError:
        return None


def _unbounded(formula: Polynomial, sizes) -> int | None:
    """The formula's value with no ceiling (Polynomial.evaluate refuses overflow); None unless every
    atom is a plain bound name."""
    total = 0
    for mono, coeff in formula.terms:
        term = coeff
        for atom, exponent in mono:
            if not atom.isidentifier() or type(sizes.get(atom)) is not int:
                return None
            term *= sizes[atom] ** exponent
        total += term
    return total
