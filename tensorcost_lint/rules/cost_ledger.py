"""TCL501 (off by default) and TCL502: the cost ledger of each site, and its roofline bound."""

from __future__ import annotations

from decimal import Decimal

from estimator.units import format_rate, significant

from .base import Example, Rule
from .messages import format_bytes, format_flops, format_seconds, sized_shape


def _intensity(cost) -> str:
    return significant(cost.arithmetic_intensity, 4)


def ledger_text(result, settings, sizes) -> str:
    cost, site = result.cost, result.site
    if not cost.resolved:
        return f"cost of `{site.expression}` unresolved: {cost.reason}"
    output = ""
    if site.shapes is not None and site.shapes.output_shape is not None:
        output = f"output {sized_shape(site.shapes.output_shape, sizes)} {cost.output_dtype} {format_bytes(cost.output_bytes)}, "
    formula = f" ({cost.flops_formula})" if cost.flops_formula else ""
    text = (f"cost: {format_flops(cost.flops)}{formula}, {output}traffic {format_bytes(cost.traffic_bytes)} "
            f"across {settings.traffic_boundary}, intensity {_intensity(cost)} FLOP/B")
    if cost.lower_bound_seconds is not None:
        text += (f", lower bound {format_seconds(cost.lower_bound_seconds)} on {settings.hardware_id} "
                 f"({cost.bottleneck}-bound)")
    else:
        text += f", no bound: {cost.bound_reason}"
    return text


class CostLedger(Rule):
    code = "TCL501"
    name = "cost-ledger"
    summary = "cost ledger of a call site (FLOPs, bytes, traffic, intensity, lower bound, bottleneck)"
    severity = "info"
    default_enabled = False
    what_it_does = (
        "Reports, for every matmul/einsum/attention call, what it costs under the declared dims and the hardware "
        "evidence: FLOPs with the symbolic formula, output bytes, traffic across the boundary, arithmetic "
        "intensity, the roofline lower bound and its bottleneck — or why the site could not be costed."
    )
    why_bad = "It is not bad: it is the ledger. Enable it with `--select TCL501` or `extend_select: [TCL501]`."
    example = "y = att @ v"
    use_instead = "(informational)"
    valid = ()
    invalid = (
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def mix(att: Float[Tensor, "b h s s"], v: Float[Tensor, "b h s d"]):\n    return att @ v\n',
                {"dims": {"b": 1, "h": 2, "s": 16, "d": 8}, "select": ["TCL501"]}),
    )

    def check_site(self, result, context):
        yield self.at_site(context, result, ledger_text(result, context.settings, context.sizes))


class LatencyBudget(Rule):
    code = "TCL502"
    name = "latency-budget"
    summary = "roofline lower bound over budgets.latency_seconds"
    severity = "warning"
    what_it_does = (
        "Flags a call whose roofline lower bound — max(FLOPs / peak, traffic / bandwidth) on the configured "
        "hardware evidence — exceeds `budgets.latency_seconds`. Off while that budget is null."
    )
    why_bad = (
        "The bound is what the call costs at the hardware's best: no kernel makes it faster. A call whose bound "
        "is already over the step's budget needs a different algorithm, not tuning."
    )
    example = "scores = q @ k.transpose(-2, -1)  # 2.2 TFLOP in float32 on an H100: ≥ 32.8 ms"
    use_instead = "run it in bfloat16 (989 TFLOP/s dense on an H100) or change the algorithm"
    options = "`budgets.latency_seconds` (default null: off), `hardware`, `evidence`, `execution`"
    valid = (
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def mix(att: Float[Tensor, "b h s s"], v: Float[Tensor, "b h s d"]):\n    return att @ v\n',
                {"dims": {"b": 1, "h": 2, "s": 16, "d": 8}, "budgets": {"latency_seconds": 0.001}}),
    )
    invalid = (
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def mix(att: Float[Tensor, "b h s s"], v: Float[Tensor, "b h s d"]):\n    return att @ v\n',
                {"dims": {"b": 8, "h": 32, "s": 8192, "d": 128}, "budgets": {"latency_seconds": 0.001}}),
    )

    def check_site(self, result, context):
        budget = context.settings.budgets.latency_seconds
        cost = result.cost
        if budget is None or not cost.resolved or cost.lower_bound_seconds is None:
            return
        if cost.lower_bound_seconds <= budget:
            return
        if cost.bottleneck == "COMPUTE" and cost.compute_evidence is not None:
            why = (f"{format_flops(cost.flops)} at {format_rate(cost.compute_evidence.peak_flops_per_second, 'FLOP/s')} "
                   f"{cost.operand_dtypes[0]}")
        elif cost.bandwidth_evidence is not None:
            why = (f"{format_bytes(cost.traffic_bytes)} at "
                   f"{format_rate(cost.bandwidth_evidence.sustained_bytes_per_second, 'B/s')}")
        else:
            why = ""
        yield self.at_site(context, result, (
            f"roofline lower bound {format_seconds(cost.lower_bound_seconds)} on {context.settings.hardware_id} exceeds "
            f"budgets.latency_seconds {format_seconds(Decimal(budget))} ({cost.bottleneck}-bound: {why}); "
            "no kernel can beat this bound — reduce the work, the precision or the traffic"))
