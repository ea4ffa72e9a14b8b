"""Frozen, slotted records the cost model takes; every constructor validates its fields.

Fields are checked with `type(x) is` rather than isinstance: a mutable look-alike (a dict-backed
duck type, a subclass overriding __eq__) could change after validation and silently alter a
plan whose id was already computed.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from decimal import Decimal

from .counting import checked_product, require_int
from .dtypes import DType
from .errors import AmbiguousLiveness, EvidenceMismatch, InvalidRecord, InvalidShape, UnownedTraffic

LIVENESS_POLICIES = ("serial-reuse", "all-executions-live", "not-retained")
FLOP_CONVENTIONS = {"fma-2": 2, "fma-1": 1}  # FLOPs counted per fused multiply-add
BROADCAST_POLICIES = ("strict", "shared-weights")


def require_text(value: object, field: str) -> str:
    if type(value) is not str or not value.strip():
        raise InvalidRecord(field, f"expected a non-empty string, got {value!r}")
    return value


def require_type(value: object, expected: type, field: str):
    if type(value) is not expected:
        raise InvalidRecord(field, f"expected {expected.__name__}, got {type(value).__name__}")
    return value


def require_tuple_of(value: object, expected: type, field: str) -> tuple:
    require_type(value, tuple, field)
    for index, item in enumerate(value):
        require_type(item, expected, f"{field}[{index}]")
    return value


def require_positive_decimal(value: object, field: str) -> Decimal:
    require_type(value, Decimal, field)
    if not value.is_finite() or value <= 0:
        raise InvalidRecord(field, f"must be a positive finite number, got {value}")
    return value


def require_choice(value: object, choices, field: str) -> str:
    if type(value) is not str or value not in choices:
        raise InvalidRecord(field, f"expected one of {', '.join(choices)}, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """A named tensor crossing the traffic boundary `accesses` times per execution
    (reads for an input, writes for an output)."""

    name: str
    shape: tuple[int, ...]
    dtype: DType
    accesses: int = 1

    def __post_init__(self) -> None:
        require_text(self.name, "tensor.name")
        require_type(self.shape, tuple, f"{self.name}.shape")
        for index, size in enumerate(self.shape):
            require_int(size, f"{self.name}.shape[{index}]", error=InvalidShape)
        require_type(self.dtype, DType, f"{self.name}.dtype")
        require_int(self.accesses, f"{self.name}.accesses")
        checked_product((*self.shape, self.dtype.bytes, self.accesses), f"{self.name}.shape")

    @property
    def elements(self) -> int:
        return checked_product(self.shape, f"{self.name}.shape")

    @property
    def bytes(self) -> int:
        return checked_product((*self.shape, self.dtype.bytes), f"{self.name}.shape")


@dataclass(frozen=True, slots=True)
class ExecutionPolicy:
    """How many times the operation runs and how many copies of its output stay live.

    The three liveness policies exist because retained memory is otherwise ambiguous: a loop of 32
    layers either reuses one output buffer (serial-reuse), keeps every output for backward
    (all-executions-live), or streams it away (not-retained).
    """

    count: int = 1
    liveness: str = "serial-reuse"
    retained_copies: int = 1

    def __post_init__(self) -> None:
        require_int(self.count, "execution.count")
        require_choice(self.liveness, LIVENESS_POLICIES, "execution.liveness")
        require_int(self.retained_copies, "execution.retained_copies", minimum=0)
        if self.liveness == "serial-reuse" and self.retained_copies != 1:
            raise AmbiguousLiveness(
                "execution.retained_copies",
                f"serial-reuse keeps exactly 1 copy, got retained_copies={self.retained_copies}",
            )
        if self.liveness == "not-retained" and self.retained_copies != 0:
            raise AmbiguousLiveness(
                "execution.retained_copies",
                f"not-retained keeps 0 copies, got retained_copies={self.retained_copies}",
            )
        if self.liveness == "all-executions-live" and self.retained_copies != self.count:
            raise AmbiguousLiveness(
                "execution.retained_copies",
                f"all-executions-live with count={self.count} needs retained_copies={self.count}, "
                f"got {self.retained_copies}",
            )


@dataclass(frozen=True, slots=True)
class TrafficModel:
    """The named boundary traffic is counted across, and who owns that number."""

    boundary: str
    owner: str

    def __post_init__(self) -> None:
        require_text(self.boundary, "traffic.boundary")
        if type(self.owner) is not str or not self.owner.strip():
            raise UnownedTraffic("traffic.owner", "traffic needs an owner (who answers for this number)")


@dataclass(frozen=True, slots=True)
class ComputeEvidence:
    """A peak FLOP rate, valid only for its operation class, dtypes and FLOP convention."""

    operation_class: str
    operand_dtype: DType
    accumulation_dtype: DType
    flop_convention: str
    peak_flops_per_second: Decimal

    def __post_init__(self) -> None:
        require_text(self.operation_class, "compute.operation_class")
        require_type(self.operand_dtype, DType, "compute.operand_dtype")
        require_type(self.accumulation_dtype, DType, "compute.accumulation_dtype")
        require_choice(self.flop_convention, tuple(FLOP_CONVENTIONS), "compute.flop_convention")
        require_positive_decimal(self.peak_flops_per_second, "compute.peak_flops_per_second")

    def matches(self, operation_class: str, operand: DType, accumulation: DType, convention: str) -> bool:
        return (
            self.operation_class == operation_class
            and self.operand_dtype == operand
            and self.accumulation_dtype == accumulation
            and self.flop_convention == convention
        )


@dataclass(frozen=True, slots=True)
class BandwidthEvidence:
    traffic_boundary: str
    sustained_bytes_per_second: Decimal

    def __post_init__(self) -> None:
        require_text(self.traffic_boundary, "bandwidth.traffic_boundary")
        require_positive_decimal(self.sustained_bytes_per_second, "bandwidth.sustained_bytes_per_second")


@dataclass(frozen=True, slots=True)
class HardwareEvidence:
    """One device's evidence (Contract 3): where the numbers came from, when, and who owns them."""

    id: str
    device: str
    source: str
    measured: str  # ISO date of the evidence
    owner: str
    compute: tuple[ComputeEvidence, ...] = ()
    bandwidth: tuple[BandwidthEvidence, ...] = ()
    memory_bytes: int | None = None  # the device's memory (Contract 9: TCL504), None when not given

    def __post_init__(self) -> None:
        require_text(self.id, "hardware.id")
        if self.memory_bytes is not None:
            require_int(self.memory_bytes, f"{self.id}.memory_bytes")
        require_text(self.device, f"{self.id}.device")
        require_text(self.source, f"{self.id}.source")
        require_text(self.measured, f"{self.id}.measured")
        try:
            _dt.date.fromisoformat(self.measured)
        except ValueError:
            raise InvalidRecord(f"{self.id}.measured", f"expected an ISO date (YYYY-MM-DD), got {self.measured!r}")
        require_text(self.owner, f"{self.id}.owner")
        require_tuple_of(self.compute, ComputeEvidence, f"{self.id}.compute")
        require_tuple_of(self.bandwidth, BandwidthEvidence, f"{self.id}.bandwidth")
        seen = set()
        for record in self.compute:
            key = (record.operation_class, record.operand_dtype, record.accumulation_dtype, record.flop_convention)
            if key in seen:
                raise EvidenceMismatch(
                    f"{self.id}.compute", f"two compute records for {record.operation_class} {record.operand_dtype.name}"
                )
            seen.add(key)
        boundaries = [b.traffic_boundary for b in self.bandwidth]
        if len(set(boundaries)) != len(boundaries):
            raise EvidenceMismatch(f"{self.id}.bandwidth", "two bandwidth records for one boundary")

    def compute_for(self, operation_class: str, operand: DType, accumulation: DType, convention: str):
        """The exactly matching compute record, or None: evidence is never reused across classes."""
        for record in self.compute:
            if record.matches(operation_class, operand, accumulation, convention):
                return record
        return None

    def bandwidth_for(self, boundary: str):
        for record in self.bandwidth:
            if record.traffic_boundary == boundary:
                return record
        return None


@dataclass(frozen=True, slots=True)
class Owners:
    """Who answers for each assumption of a plan, as (role, owner) pairs in a fixed order."""

    pairs: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        require_type(self.pairs, tuple, "owners")
        for pair in self.pairs:
            require_type(pair, tuple, "owners")
            if len(pair) != 2:
                raise InvalidRecord("owners", "each owner is a (role, name) pair")
            require_text(pair[0], "owners.role")
            require_text(pair[1], f"owners.{pair[0]}")
