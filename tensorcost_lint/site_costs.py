"""From a call site's symbolic model to checked plans and exact numbers.

Numbers exist only when every dim is bound and the estimator accepts the plan; otherwise the site
is unresolved and `reason` says why in the user's words (which dims to declare, which trap). A
multi-operand einsum is costed along the path its framework really executes, step by step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from estimator import (
    AttentionPlan,
    EstimatorError,
    TensorSpec,
    TrafficModel,
    contraction_plan,
    estimate,
    normalize_dtype,
)
from estimator.contraction import flops_per_point
from estimator.planner import build_network, framework_execution
from shape_annotations import Polynomial, ShapeError, Unknown, evaluate_dim, free_names, render_dim

from .analysis.context import CallSite

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_PLANNED_FRAMEWORKS = {"torch": "torch", "numpy": "numpy", "jax": "jax", "opt_einsum": "opt_einsum", "einops": "torch"}


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

    @property
    def flops_formula(self) -> str | None:
        return None if self.flops_polynomial is None else self.flops_polynomial.render()


def unresolved(reason: str) -> SiteCost:
    return SiteCost(False, reason)


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
        if site.options.get("autocast") and dtype == "float32":
            dtype = site.options["autocast"]  # autocast casts float32 operands of matmuls
        dtypes.append(dtype)
    return dtypes


def _relabel(site_shapes) -> tuple[tuple[str, ...], str, dict]:
    """Map the model's labels (ellipsis labels are private characters) to a-zA-Z for the estimator."""
    table: dict[str, str] = {}
    for label in "".join(site_shapes.inputs) + site_shapes.output:
        if label not in table:
            table[label] = _LETTERS[len(table)]
    inputs = tuple("".join(table[c] for c in term) for term in site_shapes.inputs)
    return inputs, "".join(table[c] for c in site_shapes.output), table


def _polynomial(dims, factor: int) -> Polynomial | None:
    product = Polynomial.from_dims(dims)
    return None if product is None else product * factor


def cost_site(site: CallSite, sizes: dict, config) -> SiteCost:
    if site.unresolved:
        return unresolved(site.unresolved)
    shapes = site.shapes
    if shapes is None:
        return unresolved("operands have no known shapes")
    if shapes.failed:
        return unresolved(shapes.problems[0].message)
    for index, shape in enumerate(shapes.operands):
        for position, dim in enumerate(shape):
            if type(dim) is Unknown:
                what = "" if dim.label in ("?", "_") else f" ({dim.label})"
                return unresolved(f"operand {index} dim {position}{what} is not known statically")
    bound_shapes, missing = [], []
    for shape in shapes.operands:
        bound, absent = _bind(shape, sizes)
        bound_shapes.append(bound)
        missing.extend(n for n in absent if n not in missing)
    if missing:
        names = ", ".join(missing)
        return unresolved(f"unbound dims: {names} (declare sizes in tensorcost.yaml `dims`, "
                          f"`--dim NAME=SIZE` or a `# tensorcost: dims` pragma)")
    dtypes = operand_dtypes(site, config.default_dtype)
    if len(set(dtypes)) > 1:
        return unresolved(f"operands have different dtypes ({', '.join(dtypes)})")
    broadcast = [p for p in shapes.problems if p.code == "TCL201"]
    if broadcast:
        return unresolved("implicit broadcast: not costed until the broadcast is made explicit")
    operand = normalize_dtype(dtypes[0])
    output_dtype = normalize_dtype(site.output_dtype or dtypes[0])
    accumulation = normalize_dtype(site.accumulation_dtype) if site.accumulation_dtype else None
    operation_class = "dense-matmul"
    if config_tf32(site, config) and operand.name == "float32":
        operation_class = "dense-matmul-tf32"
    try:
        if shapes.attention:
            return _cost_attention(site, bound_shapes, operand, output_dtype, accumulation, operation_class, config)
        if len(bound_shapes) > 2:
            return _cost_path(site, bound_shapes, operand, output_dtype, accumulation, operation_class, config)
        return _cost_single(site, bound_shapes, operand, output_dtype, accumulation, operation_class, config)
    except EstimatorError as error:
        return unresolved(f"{error.trap}: {error.reason}")


def config_tf32(site: CallSite, config) -> bool:
    """float32 sites run at the TF32 rate only where the file opts in (allow_tf32 = True)."""
    return bool(site.options.get("tf32"))


def _common(config):
    # the traffic number's owner is the project config; never its absolute path, which would make
    # plan ids differ between two clones of one repository
    return dict(execution=config.execution, traffic=TrafficModel(config.traffic_boundary, "project config"),
                hardware=config.hardware)


def _finish(plan, site: CallSite, flops_poly, bytes_poly, operand_shapes=None, **extra) -> SiteCost:
    """`operand_shapes` as the user's operands hold them (the plan may use another layout)."""
    result = estimate(plan)
    return SiteCost(
        resolved=True,
        operand_shapes=operand_shapes or tuple(t.shape for t in _plan_inputs(plan)),
        operand_dtypes=tuple(t.dtype.name for t in _plan_inputs(plan)),
        output_shape=plan.output.shape,
        output_dtype=plan.output.dtype.name,
        accumulation_dtype=plan.accumulation.name,
        operation_class=plan.operation_class,
        flops=result.flops,
        flops_polynomial=flops_poly,
        output_bytes=result.output_bytes,
        output_bytes_polynomial=bytes_poly,
        traffic_bytes=result.traffic_bytes,
        retained_bytes=result.retained_bytes,
        arithmetic_intensity=result.arithmetic_intensity,
        lower_bound_seconds=result.lower_bound_seconds,
        bottleneck=result.bottleneck,
        bound_reason=result.bound_reason,
        compute_evidence=result.compute_evidence,
        bandwidth_evidence=result.bandwidth_evidence,
        plan_id=result.plan_id,
        plans=(plan,),
        **extra,
    )


def _plan_inputs(plan):
    return plan.inputs if hasattr(plan, "inputs") else (plan.query, plan.key, plan.value)


def _bytes_polynomial(dims, dtype) -> Polynomial | None:
    return _polynomial(dims, dtype.bytes)


def _cost_single(site, shapes, operand, output_dtype, accumulation, operation_class, config) -> SiteCost:
    model = site.shapes
    inputs, output, _ = _relabel(model)
    tensors = tuple(TensorSpec(f"operand{i}", shape, operand) for i, shape in enumerate(shapes))
    plan = contraction_plan(
        operation=f"{site.operation} at line {site.line}", operation_class=operation_class, inputs=tensors,
        output_name="output", output_dtype=output_dtype, accumulation_dtype=accumulation,
        subscripts=",".join(inputs) + "->" + output, broadcast_policy="shared-weights", **_common(config),
    )
    factor = flops_per_point(len(tensors), plan.contraction.summed)
    labels = list(dict.fromkeys("".join(model.inputs)))
    flops_poly = _polynomial([model.dims[label] for label in labels], factor)
    if flops_poly is not None and config.execution.count != 1:
        flops_poly = flops_poly * config.execution.count
    bytes_poly = _bytes_polynomial([model.dims[label] for label in model.output], output_dtype)
    return _finish(plan, site, flops_poly, bytes_poly)


def _product(values) -> int:
    total = 1
    for value in values:
        total *= value
    return total


def _cost_attention(site, shapes, operand, output_dtype, accumulation, operation_class, config) -> SiteCost:
    given = tuple(tuple(s) for s in shapes)
    query, key, value = shapes
    if site.spec.layout == "bshd":
        query, key, value = ((s[0], s[2], s[1], s[3]) for s in (query, key, value))
    else:
        query, key, value = (_as_rank4(s) for s in (query, key, value))
    plan = AttentionPlan(
        operation=f"attention at line {site.line}", form="fused",
        query=TensorSpec("query", query, operand), key=TensorSpec("key", key, operand),
        value=TensorSpec("value", value, operand), output_dtype=output_dtype, score_dtype=output_dtype,
        causal=bool(site.options.get("is_causal")), accumulation_dtype=accumulation,
        operation_class=operation_class, **_common(config),
    )
    model = site.shapes
    flops_poly = _attention_polynomial(model, plan.causal)
    bytes_poly = _bytes_polynomial([model.dims[label] for label in model.output], output_dtype)
    result = _finish(plan, site, flops_poly, bytes_poly, operand_shapes=given)
    # in both layouts the output is the query's shape with the value's head dim
    return replace(result, output_shape=given[0][:-1] + given[2][-1:])


def _attention_polynomial(model, causal: bool):
    """2·(batch·q·k)·d + 2·(batch·q·k)·e; causal with q and k the same dim: q·k → q(q+1)/2."""
    # roles by label, whatever the layout: the query's own label is the one the key lacks
    q_labels, k_labels, v_labels = model.inputs
    d_label, e_label = q_labels[-1], v_labels[-1]
    q_label = next(c for c in q_labels if c not in k_labels)
    k_label = next(c for c in k_labels if c not in q_labels)
    batch = [model.dims[c] for c in q_labels if c not in (q_label, d_label)]
    q_dim, k_dim = model.dims[q_label], model.dims[k_label]
    d, e = model.dims[d_label], model.dims[e_label]
    head = Polynomial.from_dims(batch)
    width = Polynomial.from_dims([d]) + Polynomial.from_dims([e]) if None not in (
        Polynomial.from_dims([d]), Polynomial.from_dims([e])) else None
    if head is None or width is None:
        return None
    if not causal:
        entries = Polynomial.from_dims([q_dim, k_dim])
        return None if entries is None else head * entries * width * 2
    if q_dim != k_dim:
        return None  # min(i+1, k) summed over q: not a polynomial unless q and k are one dim
    query = Polynomial.from_dim(q_dim)
    return None if query is None else head * (query * query + query) * width


def _as_rank4(shape):
    """SDPA takes [..., L, E]; fold leading batch dims into b and heads into h."""
    if len(shape) == 4:
        return shape
    if len(shape) == 3:
        return (shape[0], 1, shape[1], shape[2])
    if len(shape) == 2:
        return (1, 1, shape[0], shape[1])
    return (_product(shape[:-3]), shape[-3], shape[-2], shape[-1])


def _cost_path(site, shapes, operand, output_dtype, accumulation, operation_class, config) -> SiteCost:
    """A multi-operand einsum: each pairwise step of the executed path is its own checked plan;
    FLOPs and traffic add up, and so do the steps' bounds (they run one after another)."""
    model = site.shapes
    inputs, output, table = _relabel(model)
    network = build_network(",".join(inputs) + "->" + output, shapes)
    framework = _PLANNED_FRAMEWORKS.get(site.framework, "torch")
    if site.framework == "einops":
        framework = {"numpy": "numpy", "jax": "jax"}.get(_operand_framework(site), "torch")
    execution = framework_execution(framework, network, optimize=site.options.get("optimize"),
                                    torch_strategy=config.torch_einsum)
    back = {v: model.dims[k] for k, v in table.items()}
    live = [TensorSpec(f"operand{i}", shape, operand) for i, shape in enumerate(shapes)]
    steps = execution.order.steps if execution.order is not None else None
    plans, flops_poly, largest = [], Polynomial.const(0), 0
    if steps is None:  # numpy's default: one loop over every index at once
        step_specs = [(tuple(range(len(live))), ",".join(inputs) + "->" + output)]
    else:
        step_specs = [(step.operands, step.subscripts) for step in steps]
    for number, (positions, subscripts) in enumerate(step_specs):
        operands = tuple(live[p] for p in positions)
        final = number == len(step_specs) - 1
        plan = contraction_plan(
            operation=f"einsum step {number + 1} at line {site.line}", operation_class=operation_class,
            inputs=operands, output_name="output" if final else f"intermediate{number}",
            output_dtype=output_dtype if final else operand, accumulation_dtype=accumulation,
            subscripts=subscripts, broadcast_policy="shared-weights", **_common(config),
        )
        plans.append(plan)
        labels = list(dict.fromkeys(subscripts.split("->")[0].replace(",", "")))
        factor = flops_per_point(len(positions), plan.contraction.summed)
        step_poly = _polynomial([back[c] for c in labels], factor)
        flops_poly = None if flops_poly is None or step_poly is None else flops_poly + step_poly
        if not final:
            largest = max(largest, plan.output.bytes)
        live = [t for i, t in enumerate(live) if i not in positions] + [plan.output]
    results = [estimate(plan) for plan in plans]
    bound = None
    if all(r.lower_bound_seconds is not None for r in results):
        bound = sum((r.lower_bound_seconds for r in results), Decimal(0))
    flops = sum(r.flops for r in results)
    traffic = sum(r.traffic_bytes for r in results)
    compute = sum(r.compute_seconds or 0 for r in results)
    transfer = sum(r.traffic_seconds or 0 for r in results)
    if flops_poly is not None and config.execution.count != 1:
        flops_poly = flops_poly * config.execution.count
    final = plans[-1]
    return SiteCost(
        resolved=True,
        operand_shapes=tuple(shapes),
        operand_dtypes=tuple(operand.name for _ in shapes),
        output_shape=final.output.shape,
        output_dtype=final.output.dtype.name,
        accumulation_dtype=final.accumulation_dtype.name,
        operation_class=operation_class,
        flops=flops,
        flops_polynomial=flops_poly,
        output_bytes=results[-1].output_bytes,
        output_bytes_polynomial=_bytes_polynomial([model.dims[c] for c in model.output], output_dtype),
        traffic_bytes=traffic,
        retained_bytes=results[-1].retained_bytes,
        arithmetic_intensity=Decimal(flops) / Decimal(traffic),
        lower_bound_seconds=bound,
        bottleneck=None if bound is None else ("COMPUTE" if compute >= transfer else "TRAFFIC"),
        bound_reason=next((r.bound_reason for r in results if r.bound_reason), None),
        compute_evidence=results[0].compute_evidence,
        bandwidth_evidence=results[0].bandwidth_evidence,
        plan_id=_combined_id(results),
        execution=execution,
        network=network,
        largest_intermediate_bytes=largest or None,
        plans=tuple(plans),
    )


def _operand_framework(site) -> str | None:
    for operand in site.operands:
        if operand.framework:
            return operand.framework
    return None


def _combined_id(results) -> str:
    import hashlib

    joined = ",".join(r.plan_id for r in results)
    return hashlib.sha256(joined.encode("ascii")).hexdigest()[:20]
