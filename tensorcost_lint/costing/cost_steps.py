"""The checked estimator plans of one call site, step by step: one plan for a pairwise contraction
or a fused attention, one per executed step for a multi-operand einsum (along the path its framework
really executes). `site_costs.aggregate` folds the steps into the site's numbers."""

from __future__ import annotations

from dataclasses import dataclass

from estimator import INDEX_LETTERS, AttentionPlan, Estimate, TensorSpec, TrafficModel, contraction_plan, estimate
from estimator.contraction import flops_per_point
from estimator.planner import build_network, framework_execution
from shape_annotations import Polynomial

from ..analysis.facts import operand_framework

_PLANNED_FRAMEWORKS = {"torch": "torch", "numpy": "numpy", "jax": "jax", "opt_einsum": "opt_einsum", "einops": "torch"}


@dataclass(frozen=True)
class StepCost:
    """One checked plan and its estimate."""

    plan: object  # ContractionPlan | AttentionPlan
    estimate: Estimate


@dataclass(frozen=True)
class CostedSteps:
    """A site's executed steps, with what only the site knows (its shapes and symbolic formulas)."""

    steps: tuple[StepCost, ...]
    operand_shapes: tuple  # as the user's operands hold them (a plan may use another layout)
    operand_dtype: str
    output_shape: tuple
    flops_polynomial: Polynomial | None
    output_bytes_polynomial: Polynomial | None
    execution: object = None  # FrameworkExecution of a multi-operand einsum
    network: object = None  # the planner Network it was bound to
    largest_intermediate_bytes: int | None = None


def _step(plan) -> StepCost:
    return StepCost(plan, estimate(plan))


def costed_steps(site, bound_shapes, operand, output_dtype, accumulation, operation_class, settings) -> CostedSteps:
    """Raises EstimatorError when the estimator refuses a plan (its trap names why)."""
    if site.shapes.attention:
        return _cost_attention(site, bound_shapes, operand, output_dtype, accumulation, operation_class, settings)
    if len(bound_shapes) > 2:
        return _cost_path(site, bound_shapes, operand, output_dtype, accumulation, operation_class, settings)
    return _cost_single(site, bound_shapes, operand, output_dtype, accumulation, operation_class, settings)


def relabel(site_shapes) -> tuple[tuple[str, ...], str, dict]:
    """Map the model's labels (ellipsis labels are private characters) to a-zA-Z for the estimator."""
    table: dict[str, str] = {}
    for label in "".join(site_shapes.inputs) + site_shapes.output:
        if label not in table:
            table[label] = INDEX_LETTERS[len(table)]
    inputs = tuple("".join(table[c] for c in term) for term in site_shapes.inputs)
    return inputs, "".join(table[c] for c in site_shapes.output), table


def _polynomial(dims, factor: int) -> Polynomial | None:
    product = Polynomial.from_dims(dims)
    return None if product is None else product * factor


def _common(settings):
    # the traffic number's owner is the project config; never its absolute path, which would make
    # plan ids differ between two clones of one repository
    return dict(execution=settings.execution, traffic=TrafficModel(settings.traffic_boundary, "project config"),
                hardware=settings.hardware)


def _bytes_polynomial(dims, dtype) -> Polynomial | None:
    return _polynomial(dims, dtype.bytes)


def _cost_single(site, shapes, operand, output_dtype, accumulation, operation_class, settings) -> CostedSteps:
    model = site.shapes
    inputs, output, _ = relabel(model)
    tensors = tuple(TensorSpec(f"operand{i}", shape, operand) for i, shape in enumerate(shapes))
    plan = contraction_plan(
        operation=f"{site.operation} at line {site.line}", operation_class=operation_class, inputs=tensors,
        output_name="output", output_dtype=output_dtype, accumulation_dtype=accumulation,
        subscripts=",".join(inputs) + "->" + output, broadcast_policy="shared-weights", **_common(settings),
    )
    factor = flops_per_point(len(tensors), plan.contraction.summed)
    labels = list(dict.fromkeys("".join(model.inputs)))
    flops_poly = _polynomial([model.dims[label] for label in labels], factor)
    if flops_poly is not None and settings.execution.count != 1:
        flops_poly = flops_poly * settings.execution.count
    bytes_poly = _bytes_polynomial([model.dims[label] for label in model.output], output_dtype)
    return CostedSteps((_step(plan),), tuple(shapes), operand.name, plan.output.shape, flops_poly, bytes_poly)


def _product(values) -> int:
    total = 1
    for value in values:
        total *= value
    return total


def _cost_attention(site, shapes, operand, output_dtype, accumulation, operation_class, settings) -> CostedSteps:
    given = tuple(tuple(s) for s in shapes)
    query, key, value = shapes
    if site.attention.layout == "bshd":
        query, key, value = ((s[0], s[2], s[1], s[3]) for s in (query, key, value))
    else:
        query, key, value = (_as_rank4(s) for s in (query, key, value))
    plan = AttentionPlan(
        operation=f"attention at line {site.line}", form="fused",
        query=TensorSpec("query", query, operand), key=TensorSpec("key", key, operand),
        value=TensorSpec("value", value, operand), output_dtype=output_dtype, score_dtype=output_dtype,
        causal=bool(site.attention.is_causal), accumulation_dtype=accumulation,
        operation_class=operation_class, **_common(settings),
    )
    model = site.shapes
    flops_poly = attention_polynomial(model, plan.causal)
    bytes_poly = _bytes_polynomial([model.dims[label] for label in model.output], output_dtype)
    # in both layouts the output is the query's shape with the value's head dim
    return CostedSteps((_step(plan),), given, operand.name, given[0][:-1] + given[2][-1:], flops_poly, bytes_poly)


def attention_polynomial(model, causal: bool):
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


def _cost_path(site, shapes, operand, output_dtype, accumulation, operation_class, settings) -> CostedSteps:
    """A multi-operand einsum: each pairwise step of the executed path is its own checked plan;
    FLOPs and traffic add up, and so do the steps' bounds (they run one after another)."""
    model = site.shapes
    inputs, output, table = relabel(model)
    network = build_network(",".join(inputs) + "->" + output, shapes)
    framework = planned_framework(site)
    execution = framework_execution(framework, network, optimize=site.einsum.optimize if site.einsum else None,
                                    torch_strategy=settings.torch_einsum)
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
            subscripts=subscripts, broadcast_policy="shared-weights", **_common(settings),
        )
        plans.append(plan)
        labels = list(dict.fromkeys(subscripts.split("->")[0].replace(",", "")))
        factor = flops_per_point(len(positions), plan.contraction.summed)
        step_poly = _polynomial([back[c] for c in labels], factor)
        flops_poly = None if flops_poly is None or step_poly is None else flops_poly + step_poly
        if not final:
            largest = max(largest, plan.output.bytes)
        live = [t for i, t in enumerate(live) if i not in positions] + [plan.output]
    if flops_poly is not None and settings.execution.count != 1:
        flops_poly = flops_poly * settings.execution.count
    final = plans[-1]
    bytes_poly = _bytes_polynomial([model.dims[c] for c in model.output], output_dtype)
    return CostedSteps(tuple(_step(plan) for plan in plans), tuple(shapes), operand.name, final.output.shape,
                       flops_poly, bytes_poly, execution, network, largest or None)


def planned_framework(site) -> str:
    """The planner's name for the framework that executes the site's einsum (einops: its operands')."""
    if site.framework == "einops":
        return {"numpy": "numpy", "jax": "jax"}.get(operand_framework(site.operands), "torch")
    return _PLANNED_FRAMEWORKS.get(site.framework, "torch")
