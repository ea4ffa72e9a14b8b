"""`tensorcost estimate PLAN.yaml`: the checked numbers of one plan, as key=value lines or JSON."""

from __future__ import annotations

import json
from decimal import Decimal

from estimator import AttentionPlan, estimate
from estimator.units import round_fixed

from ..config.plan_files import load_plan
from ..hardware.evidence_files import load_evidence_file
from .output import write_output


def add_arguments(parser) -> None:
    parser.add_argument("plan", metavar="PLAN.yaml", help="plan file (Contract 4)")
    parser.add_argument("--evidence", action="append", default=[], metavar="FILE",
                        help="extra hardware-evidence YAML a plan may name by id (repeatable)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="key=value lines (Contract 4) or JSON")
    parser.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")


def _shape_text(shape) -> str:
    return "(" + ",".join(str(d) for d in shape) + ")"


def estimate_fields(plan) -> list[tuple[str, object]]:
    """The ordered (key, value) pairs of Contract 4; values keep their types for JSON."""
    result = estimate(plan)
    fields: list[tuple[str, object]] = [("plan_version", "tensor-cost-v1"), ("operation", plan.operation)]
    if type(plan) is AttentionPlan:
        fields += [("attention_form", plan.form), ("query_shape", plan.query.shape),
                   ("key_shape", plan.key.shape), ("value_shape", plan.value.shape)]
    else:
        names = ("lhs_shape", "rhs_shape") if len(plan.inputs) == 2 else ("operand_shape",)
        fields += [(name, tensor.shape) for name, tensor in zip(names, plan.inputs)]
        if len(plan.inputs) != 2:
            fields.append(("subscripts", plan.contraction.subscripts))
    fields += [
        ("output_shape", plan.output.shape),
        ("execution_count", plan.execution.count),
        ("execution_liveness", plan.execution.liveness),
        ("retained_output_copies", plan.execution.retained_copies),
        ("traffic_boundary", plan.traffic.boundary),
        ("flops", result.flops),
        ("traffic_bytes", result.traffic_bytes),
        ("retained_activation_bytes", result.retained_bytes),
        ("arithmetic_intensity_flops_per_byte", round_fixed(result.arithmetic_intensity, 3)),
        ("lower_bound_us", round_fixed(result.lower_bound_seconds * Decimal(10**6), 3)),
        ("bottleneck", result.bottleneck),
        ("plan_id", result.plan_id),
    ]
    return fields


def run(args) -> int:
    evidence = {}
    for path in args.evidence:
        evidence.update(load_evidence_file(path))
    plan = load_plan(args.plan, evidence)
    fields = estimate_fields(plan)
    if args.format == "json":
        data = {}
        for key, value in fields:
            if isinstance(value, tuple):
                value = list(value)
            elif key in ("arithmetic_intensity_flops_per_byte", "lower_bound_us"):
                value = float(value)
            data[key] = value
        text = json.dumps(data, indent=2) + "\n"
    else:
        lines = [f"{key}={_shape_text(value) if isinstance(value, tuple) else value}" for key, value in fields]
        text = "\n".join(lines) + "\n"
    inputs = [(args.plan, "the plan file"), *((path, "an input file") for path in args.evidence)]
    write_output(text, args.output, inputs)
    return 0
