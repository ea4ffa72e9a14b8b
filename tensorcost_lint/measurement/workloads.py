"""What `measure` runs for a call site or a plan file: plain data, no numpy.

A workload is the operation the plan describes, with concrete shapes: the einsum view of a
matmul/einsum (label strings bound to sizes), split into the steps its framework executes, or an
attention forward pass — never the analysed code itself, which is not imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal

from estimator import DTYPES, FLOP_CONVENTIONS, AttentionPlan, estimate



@dataclass(frozen=True)
class Step:
    """One contraction the framework runs: positions in the live operand list (each result is
    appended last, opt_einsum's convention) and its subscripts. `single_loop`: numpy runs it as
    one C loop over every index (np.einsum with optimize=False), not through BLAS."""

    operands: tuple[int, ...]
    subscripts: str
    single_loop: bool = False


@dataclass(frozen=True)
class Workload:
    id: int
    location: str  # "model.py:14:9" or the plan file
    path: str | None
    line: int | None
    column: int | None
    operation: str  # matmul | einsum | attention | linear | dot_general | plan
    framework: str | None
    expression: str
    operand_shapes: tuple = ()
    operand_dtype: str | None = None
    output_dtype: str | None = None
    accumulation_dtype: str | None = None
    steps: tuple = ()  # Step, for contractions
    attention_form: str | None = None  # fused | materialized, for attention
    causal: bool = False
    executions: int = 1
    flops: int | None = None
    traffic_bytes: int | None = None
    arithmetic_intensity: Decimal | None = None
    lower_bound_seconds: Decimal | None = None
    bottleneck: str | None = None
    bound_reason: str | None = None
    hardware_id: str | None = None
    hardware: object = field(default=None, compare=False, repr=False)  # HardwareEvidence
    plan_id: str | None = None
    skip_reason: str | None = None  # why it cannot run (unresolved, shapes that do not bind)

    @property
    def shapes_text(self) -> str:
        return " x ".join("[" + ",".join(str(d) for d in shape) + "]" for shape in self.operand_shapes)

    def footprint_bytes(self) -> int:
        """Bytes the synthetic run holds at once, generously: operands, every step's result, one
        transposed copy of the largest operand, and (attention) the scores and probabilities."""
        size = DTYPES[self.operand_dtype].bytes if self.operand_dtype in DTYPES else 8
        elements = [_product(shape) for shape in self.operand_shapes]
        total = sum(elements) + (max(elements) if elements else 0)
        if self.attention_form is not None:
            b, h, sq, _ = self.operand_shapes[0]
            sk, dv = self.operand_shapes[1][2], self.operand_shapes[2][3]
            total += 2 * b * h * sq * sk + b * h * sq * dv
        else:
            total += sum(_product(shape) for shape in step_output_shapes(self))
        return total * max(size, 4)


def operand_bytes(workload: Workload) -> int:
    size = DTYPES[workload.operand_dtype].bytes if workload.operand_dtype in DTYPES else 8
    return sum(_product(shape) for shape in workload.operand_shapes) * size


def _product(shape) -> int:
    result = 1
    for size in shape:
        result *= size
    return result


def label_sizes(inputs, shapes) -> dict | None:
    """Bind each label to a size positionally; None when one label gets two sizes (size-1 dims
    broadcast and are skipped)."""
    sizes: dict = {}
    for labels, shape in zip(inputs, shapes):
        if len(labels) != len(shape):
            return None
        for label, size in zip(labels, shape):
            if sizes.get(label, 1) != 1 and size != 1 and sizes[label] != size:
                return None
            if size != 1 or label not in sizes:
                sizes[label] = size
    return sizes


def step_output_shapes(workload: Workload) -> list[tuple]:
    """The output shape of every step, by replaying the path over the live operand list."""
    live = [tuple(s) for s in workload.operand_shapes]
    outputs = []
    for step in workload.steps:
        inputs, output = step.subscripts.split("->")
        sizes = label_sizes(inputs.split(","), [live[p] for p in step.operands]) or {}
        shape = tuple(sizes.get(label, 1) for label in output)
        live = [s for i, s in enumerate(live) if i not in step.operands] + [shape]
        outputs.append(shape)
    return outputs


def step_flops(workload: Workload, fma_flops: int = 2) -> list[int]:
    """FLOPs of each step of one execution, in the cost model's convention (per index point: one
    multiply per extra operand, plus the add when an index is summed and FMAs count 2)."""
    live = [tuple(s) for s in workload.operand_shapes]
    counts = []
    for step, output_shape in zip(workload.steps, step_output_shapes(workload)):
        inputs, output = step.subscripts.split("->")
        terms = inputs.split(",")
        sizes = label_sizes(terms, [live[p] for p in step.operands]) or {}
        summed = bool(set("".join(terms)) - set(output))
        per_point = max(1, len(terms) - 1) + (1 if summed and fma_flops == 2 else 0)
        counts.append(per_point * _product(sizes.values()))
        live = [s for i, s in enumerate(live) if i not in step.operands] + [output_shape]
    return counts


def contraction_flops(workload: Workload, fma_flops: int = 2) -> int:
    """FLOPs of the steps this workload will run, every execution."""
    return sum(step_flops(workload, fma_flops)) * workload.executions


def checked(workload: Workload, fma_flops: int = 2) -> Workload:
    """The workload, or a skipped one when what it would run is not what was costed: timing a
    different problem and comparing it with this bound would be worse than no comparison."""
    if workload.skip_reason or workload.flops is None:
        return workload
    ran = contraction_flops(workload, fma_flops) if workload.attention_form is None else (
        attention_flops(*workload.operand_shapes, fma_flops=fma_flops, causal=workload.causal) * workload.executions)
    if ran != workload.flops:
        return replace(workload, skip_reason=f"the synthetic run would do {ran} FLOPs, the model counts "
                                             f"{workload.flops}; not comparable (please report this)")
    return workload


def attention_flops(query: tuple, key: tuple, value: tuple, fma_flops: int = 2, causal: bool = False) -> int:
    """Its two matmuls, QKᵀ and PV (softmax is not counted, as in the cost model); under a causal
    mask only the scores query i may see (keys 0..i) are computed."""
    b, h, sq, d = query
    sk = key[2]
    scores = sum(min(i + 1, sk) for i in range(sq)) if causal else sq * sk
    return fma_flops * b * h * scores * (d + value[3])


def _numbers(cost) -> dict:
    return dict(flops=cost.flops, traffic_bytes=cost.traffic_bytes, arithmetic_intensity=cost.arithmetic_intensity,
                lower_bound_seconds=cost.lower_bound_seconds, bottleneck=cost.bottleneck,
                bound_reason=cost.bound_reason, plan_id=cost.plan_id)


def _single_loop(site) -> bool:
    """np.einsum's default (optimize=False) is one C loop even for two operands."""
    return site.framework == "numpy" and site.operation == "einsum" and not site.einsum.optimize


def site_workload(number: int, path: str, site_result, config) -> Workload:
    site, cost = site_result.site, site_result.cost
    common = dict(id=number, location=f"{path}:{site.line}:{site.column}", path=path, line=site.line,
                  column=site.column, operation=site.operation, framework=site.framework,
                  expression=site.expression)
    if not cost.resolved:
        return Workload(**common, skip_reason=f"not resolved: {cost.reason}")
    hardware = config.hardware
    common.update(operand_shapes=tuple(tuple(s) for s in cost.operand_shapes), operand_dtype=cost.operand_dtypes[0],
                  output_dtype=cost.output_dtype, accumulation_dtype=cost.accumulation_dtype,
                  executions=config.execution.count, hardware_id=hardware.id, hardware=hardware, **_numbers(cost))
    if site.shapes.attention:
        plan = cost.plans[0]  # the attention plan: q, k, v as [batch, heads, seq, dim], as backends take them
        common["operand_shapes"] = (plan.query.shape, plan.key.shape, plan.value.shape)
        return checked(Workload(**common, attention_form="fused", causal=plan.causal))
    if cost.execution is not None and cost.execution.order is not None:
        steps = tuple(Step(tuple(s.operands), s.subscripts, single_loop=len(s.operands) != 2)
                      for s in cost.execution.order.steps)
        return checked(Workload(**common, steps=steps))
    contraction = cost.plans[0].contraction  # the labels the cost model counted, letters a-zA-Z
    inputs, output = list(contraction.inputs), contraction.output
    if label_sizes(inputs, cost.operand_shapes) is None:
        return Workload(**common, skip_reason="operand shapes do not bind to the site's einsum labels")
    step = Step(tuple(range(len(inputs))), ",".join(inputs) + "->" + output,
                single_loop=_single_loop(site) or len(inputs) != 2)
    return checked(Workload(**common, steps=(step,)))


def plan_workload(number: int, path: str, plan) -> Workload:
    result = estimate(plan)
    common = dict(id=number, location=path, path=path, line=None, column=None, operation="plan", framework=None,
                  expression=plan.operation, executions=plan.execution.count, flops=result.flops,
                  traffic_bytes=result.traffic_bytes, arithmetic_intensity=result.arithmetic_intensity,
                  lower_bound_seconds=result.lower_bound_seconds, bottleneck=result.bottleneck,
                  bound_reason=result.bound_reason, plan_id=result.plan_id,
                  hardware_id=plan.hardware.id if plan.hardware else None, hardware=plan.hardware)
    fma_flops = FLOP_CONVENTIONS[plan.flop_convention]
    if type(plan) is AttentionPlan:
        return checked(Workload(**common, operand_shapes=(plan.query.shape, plan.key.shape, plan.value.shape),
                                operand_dtype=plan.operand_dtype.name, output_dtype=plan.output_dtype.name,
                                accumulation_dtype=plan.accumulation.name, attention_form=plan.form,
                                causal=plan.causal), fma_flops)
    contraction = plan.contraction
    step = Step(tuple(range(len(plan.inputs))), contraction.subscripts, single_loop=len(plan.inputs) != 2)
    return checked(Workload(**common, operand_shapes=tuple(t.shape for t in plan.inputs),
                            operand_dtype=plan.operand_dtype.name, output_dtype=plan.output.dtype.name,
                            accumulation_dtype=plan.accumulation_dtype.name, steps=(step,)), fma_flops)
