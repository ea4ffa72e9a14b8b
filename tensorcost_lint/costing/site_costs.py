"""From a call site's symbolic model to checked plans and exact numbers.

Numbers exist only when every dim is bound and the estimator accepts the plan; otherwise the site
is unresolved and `reason` says why in the user's words (which dims to declare, which trap). A
multi-operand einsum is costed along the path its framework really executes, step by step.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from decimal import Decimal, localcontext

from estimator import CountOverflow, EstimatorError, normalize_dtype
from shape_annotations import Polynomial, ShapeError, Unknown, evaluate_dim, free_names, render_dim

from ..analysis.call_site import CallSite
from .chain_costs import ChainOrder, chain_order
from .cost_steps import CostedSteps, costed_steps
from .overflow_costs import TooLarge, too_large


@dataclass(frozen=True)
class SiteCost:
    resolved: bool
    reason: str | None = None
    operand_shapes: tuple | None = None
    operand_dtypes: tuple = ()
    output_shape: tuple | None = None
    output_dtype: str | None = None
    accumulation_dtype: str | None = None
    operation_class: str | None = None
    flops: int | None = None
    flops_polynomial: Polynomial | None = None
    output_bytes: int | None = None
    output_bytes_polynomial: Polynomial | None = None
    traffic_bytes: int | None = None
    retained_bytes: int | None = None
    arithmetic_intensity: Decimal | None = None
    lower_bound_seconds: Decimal | None = None
    bottleneck: str | None = None
    bound_reason: str | None = None
    compute_evidence: object = None
    bandwidth_evidence: object = None
    plan_id: str | None = None
    execution: object = None  # FrameworkExecution for multi-operand einsums
    network: object = None  # the planner Network those einsums were bound to
    largest_intermediate_bytes: int | None = None
    plans: tuple = ()  # the checked estimator plans behind these numbers (one per executed step)
    chain_order: ChainOrder | None = None  # an `a @ b @ c` chain: its cost as written and at best
    too_large: object = None  # analysis.problems.CountTooLarge: a count passed 2**63-1, so no numbers

    @property
    def flops_formula(self) -> str | None:
        return None if self.flops_polynomial is None else self.flops_polynomial.render()


def unresolved(reason: str, chain: ChainOrder | None = None) -> SiteCost:
    return SiteCost(False, reason, chain_order=chain)


def aggregate(costed: CostedSteps, chain: ChainOrder | None = None) -> SiteCost:
    """The site's numbers, folded from its steps: FLOPs and traffic add up, and so do the bounds
    (the steps run one after another). One step folds to exactly its own estimate."""
    results = [step.estimate for step in costed.steps]
    final = costed.steps[-1].plan
    flops = sum(r.flops for r in results)
    traffic = sum(r.traffic_bytes for r in results)
    with localcontext() as context:
        context.prec = 40  # the estimator's precision: a sum of one is that one, unrounded
        intensity = Decimal(flops) / Decimal(traffic)
        bound = None
        if all(r.lower_bound_seconds is not None for r in results):
            bound = sum((r.lower_bound_seconds for r in results), Decimal(0))
        compute = sum((r.compute_seconds or 0 for r in results), Decimal(0))
        transfer = sum((r.traffic_seconds or 0 for r in results), Decimal(0))
    return SiteCost(
        resolved=True,
        operand_shapes=costed.operand_shapes,
        operand_dtypes=(costed.operand_dtype,) * len(costed.operand_shapes),
        output_shape=costed.output_shape,
        output_dtype=final.output.dtype.name,
        accumulation_dtype=final.accumulation.name,
        operation_class=final.operation_class,
        flops=flops,
        flops_polynomial=costed.flops_polynomial,
        output_bytes=results[-1].output_bytes,
        output_bytes_polynomial=costed.output_bytes_polynomial,
        traffic_bytes=traffic,
        retained_bytes=results[-1].retained_bytes,
        arithmetic_intensity=intensity,
        lower_bound_seconds=bound,
        bottleneck=None if bound is None else ("COMPUTE" if compute >= transfer else "TRAFFIC"),
        bound_reason=next((r.bound_reason for r in results if r.bound_reason), None),
        compute_evidence=results[0].compute_evidence,
        bandwidth_evidence=results[0].bandwidth_evidence,
        # an executed einsum path (even numpy's one loop) is identified by all its steps together
        plan_id=results[0].plan_id if costed.execution is None else _combined_id(results),
        execution=costed.execution,
        network=costed.network,
        largest_intermediate_bytes=costed.largest_intermediate_bytes,
        plans=tuple(step.plan for step in costed.steps),
        chain_order=chain,
    )


def _bind(shape, sizes) -> tuple[tuple | None, list[str]]:
    values, missing = [], []
    for dim in shape:
        try:
            value = evaluate_dim(dim, sizes)
        except ShapeError as error:
            return None, [error.message]
        if value is None:
            names = sorted(free_names(dim)) or [render_dim(dim)]
            missing.extend(n for n in names if n not in missing)
            values.append(None)
        else:
            values.append(value)
    return (None if missing else tuple(values)), missing


def operand_dtypes(site: CallSite, default_dtype: str) -> list[str]:
    dtypes = []
    for operand in site.operands:
        dtype = operand.dtype or default_dtype
        if site.precision.autocast and dtype == "float32":
            dtype = site.precision.autocast  # autocast casts float32 operands of matmuls
        dtypes.append(dtype)
    return dtypes


def cost_site(site: CallSite, sizes: dict, settings, describe) -> SiteCost:
    """`settings`: the engine's `LintSettings` (dtype, hardware, traffic boundary, execution policy,
    einsum strategy). `describe(fact)`: a shape problem in words (the rules own them; costing only
    passes them on)."""
    chain = chain_order(site.chain, sizes) if site.chain is not None else None
    outcome = _costed(site, sizes, settings, describe)
    if type(outcome) is TooLarge:
        return SiteCost(False, describe(outcome.fact, sizes), chain_order=chain, too_large=outcome.fact,
                        network=outcome.network, execution=outcome.execution)
    return unresolved(outcome, chain) if type(outcome) is str else aggregate(outcome, chain)


def _costed(site: CallSite, sizes: dict, settings, describe) -> CostedSteps | TooLarge | str:
    """The site's steps, or why it cannot be costed in the user's words."""
    if site.unresolved:
        return site.unresolved
    shapes = site.shapes
    if shapes is None:
        return "operands have no known shapes"
    if shapes.failed:
        return describe(shapes.problems[0])
    for index, shape in enumerate(shapes.operands):
        for position, dim in enumerate(shape):
            if type(dim) is Unknown:
                what = "" if dim.label in ("?", "_") else f" ({dim.label})"
                return f"operand {index} dim {position}{what} is not known statically"
    bound_shapes, missing = [], []
    for shape in shapes.operands:
        bound, absent = _bind(shape, sizes)
        bound_shapes.append(bound)
        missing.extend(n for n in absent if n not in missing)
    if missing:
        names = ", ".join(missing)
        return (f"unbound dims: {names} (declare sizes in tensorcost.yaml `dims`, "
                f"`--dim NAME=SIZE` or a `# tensorcost: dims` pragma)")
    dtypes = operand_dtypes(site, settings.default_dtype)
    if len(set(dtypes)) > 1:
        return f"operands have different dtypes ({', '.join(dtypes)})"
    if shapes.problems:  # the call runs, broadcasting silently: costed once the broadcast is explicit
        return "implicit broadcast: not costed until the broadcast is made explicit"
    operand = normalize_dtype(dtypes[0])
    precision = site.precision
    output_dtype = normalize_dtype(precision.output_dtype or dtypes[0])
    accumulation = normalize_dtype(precision.accumulation_dtype) if precision.accumulation_dtype else None
    operation_class = "dense-matmul"
    if config_tf32(site, settings) and operand.name == "float32":
        operation_class = "dense-matmul-tf32"
    try:
        return costed_steps(site, bound_shapes, operand, output_dtype, accumulation, operation_class, settings)
    except CountOverflow as error:
        return too_large(site, bound_shapes, sizes, settings, error)
    except EstimatorError as error:
        return f"{error.trap}: {error.reason}"


def config_tf32(site: CallSite, settings) -> bool:
    """float32 sites run at the TF32 rate only where the file opts in (allow_tf32 = True)."""
    return bool(site.precision.tf32)


def _combined_id(results) -> str:
    joined = ",".join(r.plan_id for r in results)
    return hashlib.sha256(joined.encode("ascii")).hexdigest()[:20]
