"""A call site and its cost as plain JSON data (Contract 6 `sites`), shared by every front end."""

from __future__ import annotations

from decimal import Decimal

from estimator.units import significant
from shape_annotations import Const, render_dim


def _dim(dim):
    # a constant no int64 holds is no size (`n = n * n` twenty times): text, as render_dim names it
    return dim.value if type(dim) is Const and -2**63 <= dim.value < 2**63 else render_dim(dim)


def _number(value: Decimal | None):
    """Ratios and times as JSON numbers with 4 significant figures (exact values stay in plans)."""
    if value is None:
        return None
    return float(significant(Decimal(value), 4))


def site_record(number: int, path: str, site_result, settings) -> dict:
    """`settings`: the engine's `LintSettings` the site was costed under (its default dtype and hardware)."""
    site, cost = site_result.site, site_result.cost
    default_dtype, hardware_id = settings.default_dtype, settings.hardware_id
    operands = []
    for index, operand in enumerate(site.operands):
        if type(operand).__name__ == "TensorFact" and operand.shape is not None:
            dtype = cost.operand_dtypes[index] if cost.resolved and index < len(cost.operand_dtypes) else (
                operand.dtype or default_dtype)
            operands.append({"shape": [_dim(d) for d in operand.shape], "dtype": dtype})
        else:
            operands.append({"shape": None, "dtype": getattr(operand, "dtype", None)})
    output = None
    if site.shapes is not None and site.shapes.output_shape is not None:
        output = {"shape": [_dim(d) for d in site.shapes.output_shape],
                  "dtype": cost.output_dtype if cost.resolved else (site.output_dtype or _common_dtype(operands))}
    record = {
        "id": number,
        "path": path,
        "line": site.line,
        "column": site.column,
        "end_line": site.end_line,
        "end_column": site.end_column,
        "operation": site.operation,
        "framework": site.framework,
        "function": site.function,
        "expression": site.expression,
        "operands": operands,
        "output": output,
        "resolved": cost.resolved,
        "reason": cost.reason,
        "flops": cost.flops,
        "flops_formula": cost.flops_formula,
        "output_bytes": cost.output_bytes,
        "traffic_bytes": cost.traffic_bytes,
        "retained_bytes": cost.retained_bytes,
        "arithmetic_intensity": _number(cost.arithmetic_intensity),
        "lower_bound_seconds": _number(cost.lower_bound_seconds),
        # the exact Decimal behind the rounded number, as text: what a cost baseline compares
        "lower_bound_seconds_exact": None if cost.lower_bound_seconds is None else str(cost.lower_bound_seconds),
        "bottleneck": cost.bottleneck,
        "bound_reason": cost.bound_reason,
        "accumulation_dtype": cost.accumulation_dtype,
        "hardware": hardware_id if cost.resolved else None,
        "plan_id": cost.plan_id,
    }
    if cost.execution is not None:
        record["execution"] = {
            "framework": cost.execution.framework,
            "description": cost.execution.description,
            "path": [list(step) for step in cost.execution.order.path] if cost.execution.order else None,
            "flops": cost.execution.flops,
        }
    return record


def _common_dtype(operands) -> str | None:
    dtypes = {o["dtype"] for o in operands}
    return dtypes.pop() if len(dtypes) == 1 else None
