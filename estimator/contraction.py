"""Contraction plans: a matmul or a single einsum, with every field bound and checked.

A matmul is costed as the equivalent einsum (`[b,m,k] x [b,k,n]` is `bmk,bkn->bmn`), so one FLOP
rule serves both: 2 FLOPs per fused multiply-add when an index is summed, 1 per output element for
pure outer/Hadamard products (the convention opt_einsum and torch's FlopCounterMode use).
"""

from __future__ import annotations

from dataclasses import dataclass

from .counting import checked_product, checked_sum
from .dtypes import Accumulation, DType, classify_accumulation, safe_accumulator
from .einsum_subscripts import parse_subscripts, bind_labels
from .errors import (
    BroadcastRefused,
    DuplicateTensor,
    IncompatibleAccumulation,
    InvalidRecord,
    NarrowingAccumulation,
)
from .matmul_shapes import analyse_matmul, check_broadcast_policy
from .records import (
    BROADCAST_POLICIES,
    FLOP_CONVENTIONS,
    ExecutionPolicy,
    HardwareEvidence,
    Owners,
    TensorSpec,
    TrafficModel,
    require_choice,
    require_text,
    require_tuple_of,
    require_type,
)

PLAN_VERSION = "tensor-cost-v1"


def flops_per_point(operand_count: int, summed: bool, convention: str = "fma-2") -> int:
    """FLOPs per index point, as opt_einsum's `flop_count` counts them: one multiply per extra
    operand, plus one add when an index is summed — 2 for a pairwise contraction (a fused
    multiply-add counted as 2 FLOPs under fma-2), 1 for an outer/Hadamard product. Under fma-1 the
    add is fused away."""
    return max(1, operand_count - 1) + (1 if summed and FLOP_CONVENTIONS[convention] == 2 else 0)


@dataclass(frozen=True, slots=True)
class Contraction:
    """Label strings per operand and output, and the size each label is bound to."""

    inputs: tuple[str, ...]
    output: str
    sizes: tuple[tuple[str, int], ...]

    @property
    def subscripts(self) -> str:
        return ",".join(self.inputs) + "->" + self.output

    @property
    def summed(self) -> bool:
        return bool(set("".join(self.inputs)) - set(self.output))

    def output_shape(self) -> tuple[int, ...]:
        size = dict(self.sizes)
        return tuple(size[label] for label in self.output)

    def flops(self, convention: str, executions: int = 1) -> int:
        """executions · prod(all index sizes) · flops_per_point."""
        per_point = flops_per_point(len(self.inputs), self.summed, convention)
        return checked_product((per_point, executions, *(s for _, s in self.sizes)), "flops")


def accumulation_check(operand: DType, accumulation: DType) -> None:
    verdict = classify_accumulation(operand, accumulation)
    if verdict is Accumulation.INCOMPATIBLE:
        raise IncompatibleAccumulation(
            "accumulation_dtype",
            f"{accumulation.name} accumulation has less range than {operand.name} operands "
            f"(use {safe_accumulator(operand).name})",
        )
    if verdict is Accumulation.NARROWING:
        raise NarrowingAccumulation(
            "accumulation_dtype",
            f"{accumulation.name} accumulation of {operand.name} operands loses precision "
            f"(safe: {safe_accumulator(operand).name})",
        )


@dataclass(frozen=True, slots=True)
class ContractionPlan:
    operation: str
    operation_class: str
    flop_convention: str
    broadcast_policy: str
    inputs: tuple[TensorSpec, ...]
    output: TensorSpec
    accumulation_dtype: DType
    contraction: Contraction
    execution: ExecutionPolicy
    traffic: TrafficModel
    hardware: HardwareEvidence | None = None
    owners: Owners = Owners()
    plan_version: str = PLAN_VERSION

    def __post_init__(self) -> None:
        require_text(self.operation, "operation")
        require_text(self.operation_class, "operation_class")
        require_choice(self.flop_convention, tuple(FLOP_CONVENTIONS), "flop_convention")
        require_choice(self.broadcast_policy, BROADCAST_POLICIES, "broadcast_policy")
        require_tuple_of(self.inputs, TensorSpec, "inputs")
        require_type(self.output, TensorSpec, "output")
        require_type(self.accumulation_dtype, DType, "accumulation_dtype")
        require_type(self.contraction, Contraction, "contraction")
        require_type(self.execution, ExecutionPolicy, "execution")
        require_type(self.traffic, TrafficModel, "traffic")
        if self.hardware is not None:
            require_type(self.hardware, HardwareEvidence, "hardware")
        require_type(self.owners, Owners, "owners")
        names = [t.name for t in self.inputs] + [self.output.name]
        for name in names:
            if names.count(name) > 1:
                raise DuplicateTensor("inputs", f"tensor name {name!r} is used twice")
        dtypes = {t.dtype for t in self.inputs}
        if len(dtypes) > 1:
            raise InvalidRecord(
                "inputs", "operands have different dtypes: " + ", ".join(t.dtype.name for t in self.inputs)
            )
        accumulation_check(self.operand_dtype, self.accumulation_dtype)
        if self.output.shape != self.contraction.output_shape():
            raise InvalidRecord("output.shape", "does not match the contraction's output")
        self.totals()  # refuses count overflow at construction, before any number is reported

    def totals(self) -> tuple[int, int, int, int]:
        """(flops, traffic bytes, output bytes, retained bytes), all executions included."""
        count = self.execution.count
        terms = [t.bytes * t.accesses for t in self.inputs]
        terms.append(self.output.bytes * self.output.accesses)
        traffic = checked_product((checked_sum(terms, "traffic_bytes"), count), "traffic_bytes")
        retained = checked_product((self.output.bytes, self.execution.retained_copies), "retained_bytes")
        return self.contraction.flops(self.flop_convention, count), traffic, self.output.bytes, retained

    @property
    def operand_dtype(self) -> DType:
        return self.inputs[0].dtype

    @property
    def accumulation(self) -> DType:
        """The accumulation dtype (AttentionPlan has the same accessor)."""
        return self.accumulation_dtype


def contraction_plan(
    *,
    operation: str,
    operation_class: str,
    inputs: tuple[TensorSpec, ...],
    output_name: str,
    output_dtype: DType,
    output_writes: int = 1,
    accumulation_dtype: DType | None = None,
    subscripts: str | None = None,
    flop_convention: str = "fma-2",
    broadcast_policy: str = "strict",
    execution: ExecutionPolicy = ExecutionPolicy(),
    traffic: TrafficModel = TrafficModel("hbm-to-compute", "unassigned"),
    hardware: HardwareEvidence | None = None,
    owners: Owners = Owners(),
) -> ContractionPlan:
    """Bind a matmul (no `subscripts`; torch.matmul semantics, two inputs) or an einsum."""
    require_tuple_of(inputs, TensorSpec, "inputs")
    require_choice(broadcast_policy, BROADCAST_POLICIES, "broadcast_policy")
    if subscripts is None:
        if len(inputs) != 2:
            raise InvalidRecord("inputs", f"a matmul takes 2 inputs, got {len(inputs)}")
        shapes = analyse_matmul(inputs[0].shape, inputs[1].shape)
        check_broadcast_policy(shapes, broadcast_policy)
        lhs, rhs, out = shapes.einsum()
        labels = (lhs, rhs)
        sizes: dict[str, int] = {}
        for term, tensor in zip(labels, inputs):
            for label, size in zip(term, tensor.shape):
                sizes[label] = max(sizes.get(label, 1), size)
        contraction = Contraction(labels, out, tuple(sorted(sizes.items())))
    else:
        spec = parse_subscripts(subscripts, [len(t.shape) for t in inputs])
        sizes, broadcasts, _ = bind_labels(spec, [t.shape for t in inputs])
        if broadcasts:
            label, a, b = broadcasts[0]
            raise BroadcastRefused("subscripts", f"index {label!r} broadcasts {a} against {b} implicitly")
        contraction = Contraction(spec.inputs, spec.output, tuple(sorted(sizes.items())))
    accumulation = accumulation_dtype or safe_accumulator(inputs[0].dtype)
    output = TensorSpec(output_name, contraction.output_shape(), output_dtype, output_writes)
    return ContractionPlan(
        operation=operation,
        operation_class=operation_class,
        flop_convention=flop_convention,
        broadcast_policy=broadcast_policy,
        inputs=inputs,
        output=output,
        accumulation_dtype=accumulation,
        contraction=contraction,
        execution=execution,
        traffic=traffic,
        hardware=hardware,
        owners=owners,
    )
