"""From a checked plan to its numbers: FLOPs, traffic, retained bytes, intensity and the bound.

The lower bound is max(FLOPs / peak, traffic / bandwidth) under the plan's assumptions — a bound,
never a latency forecast. It exists only where the evidence matches the plan exactly (operation
class, operand and accumulation dtype, FLOP convention, traffic boundary); otherwise it is None and
`bound_reason` says which record was missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, localcontext

from .attention import AttentionPlan
from .contraction import ContractionPlan
from .errors import EvidenceMismatch
from .plan_id import plan_id
from .records import BandwidthEvidence, ComputeEvidence, HardwareEvidence

COMPUTE = "COMPUTE"
TRAFFIC = "TRAFFIC"


@dataclass(frozen=True, slots=True)
class Estimate:
    flops: int
    traffic_bytes: int
    output_bytes: int
    retained_bytes: int
    arithmetic_intensity: Decimal  # FLOPs per byte of traffic
    compute_seconds: Decimal | None
    traffic_seconds: Decimal | None
    lower_bound_seconds: Decimal | None
    bottleneck: str | None
    bound_reason: str | None
    compute_evidence: ComputeEvidence | None
    bandwidth_evidence: BandwidthEvidence | None
    plan_id: str


def find_evidence(hardware: HardwareEvidence | None, plan):
    """(compute record, bandwidth record, reason) for the plan; records None where none matches."""
    if hardware is None:
        return None, None, "no hardware evidence configured"
    accumulation = plan.accumulation
    compute = hardware.compute_for(plan.operation_class, plan.operand_dtype, accumulation, plan.flop_convention)
    bandwidth = hardware.bandwidth_for(plan.traffic.boundary)
    missing = []
    if compute is None:
        missing.append(
            f"no {hardware.id} compute evidence for {plan.operation_class} {plan.operand_dtype.name} "
            f"operands, {accumulation.name} accumulation, {plan.flop_convention}"
        )
    if bandwidth is None:
        missing.append(f"no {hardware.id} bandwidth evidence for boundary {plan.traffic.boundary}")
    return compute, bandwidth, "; ".join(missing) or None


def require_evidence(plan) -> None:
    """Refuse a plan whose stated evidence does not match it (plan files must bind exactly)."""
    compute, bandwidth, reason = find_evidence(plan.hardware, plan)
    if reason:
        raise EvidenceMismatch("hardware", reason)


def estimate(plan: ContractionPlan | AttentionPlan) -> Estimate:
    if type(plan) not in (ContractionPlan, AttentionPlan):
        raise TypeError(f"not a plan: {type(plan).__name__}")
    flops, traffic, output_bytes, retained = plan.totals()
    compute, bandwidth, reason = find_evidence(plan.hardware, plan)
    with localcontext() as context:
        context.prec = 40
        intensity = Decimal(flops) / Decimal(traffic)
        compute_seconds = Decimal(flops) / compute.peak_flops_per_second if compute else None
        traffic_seconds = Decimal(traffic) / bandwidth.sustained_bytes_per_second if bandwidth else None
    bound = bottleneck = None
    if compute and bandwidth:
        bottleneck = COMPUTE if compute_seconds >= traffic_seconds else TRAFFIC
        bound = max(compute_seconds, traffic_seconds)
    return Estimate(
        flops=flops,
        traffic_bytes=traffic,
        output_bytes=output_bytes,
        retained_bytes=retained,
        arithmetic_intensity=intensity,
        compute_seconds=compute_seconds,
        traffic_seconds=traffic_seconds,
        lower_bound_seconds=bound,
        bottleneck=bottleneck,
        bound_reason=reason,
        compute_evidence=compute,
        bandwidth_evidence=bandwidth,
        plan_id=plan_id(plan),
    )
