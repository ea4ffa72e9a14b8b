"""Plan files (Contract 4): YAML → a checked ContractionPlan or AttentionPlan.

Every trap the estimator knows is refused here before any number is printed; the ConfigError
carries the trap's name so the one-line message says what went wrong (`ambiguous liveness`, ...).
"""

from __future__ import annotations

from pathlib import Path

from estimator import (
    ATTENTION_FORMS,
    BROADCAST_POLICIES,
    FLOP_CONVENTIONS,
    LIVENESS_POLICIES,
    PLAN_VERSION,
    AttentionPlan,
    EstimatorError,
    ExecutionPolicy,
    HardwareEvidence,
    Owners,
    TensorSpec,
    TrafficModel,
    contraction_plan,
    normalize_dtype,
    require_evidence,
)

from ..hardware.evidence_files import read_bandwidth, read_compute, resolve_device
from .errors import ConfigError
from .fields import MappingReader
from .safe_yaml import load_yaml_file

_INLINE_COMPUTE = ("operation_class", "operand_dtype", "accumulation_dtype", "flop_convention", "peak_flops_per_second")


def _dtype(reader: MappingReader, key: str, *, required: bool = True):
    name = reader.text(key, required=required)
    if name is None:
        return None
    try:
        return normalize_dtype(name, key)
    except EstimatorError as error:
        raise reader.error(key, error.reason) from None


def _shape(reader: MappingReader, key: str) -> tuple[int, ...]:
    values = reader.sequence(key, required=True)
    if len(values) > 64:
        raise reader.error(key, "more than 64 dims")
    shape = []
    for index, value in enumerate(values):
        try:
            shape.append(reader.check_integer(f"{key}[{index}]", value))
        except ConfigError as error:
            raise ConfigError(error.source, error.key, f"invalid shape: {error.reason}") from None
    return tuple(shape)


def _tensor(reader: MappingReader, count_key: str) -> TensorSpec:
    tensor = TensorSpec(
        name=reader.text("name", required=True),
        shape=_shape(reader, "shape"),
        dtype=_dtype(reader, "dtype"),
        accesses=reader.integer(count_key, 1),
    )
    reader.finish()
    return tensor


def _inline_hardware(reader: MappingReader) -> HardwareEvidence:
    """One device written into the plan: its compute and bandwidth fields side by side with its own
    (read by the evidence reader, as in an evidence file), then no key left unread."""
    device_id = reader.text("id", required=True)
    compute = read_compute(reader, finish=False)
    bandwidth = read_bandwidth(reader, finish=False)
    device = HardwareEvidence(
        id=device_id,
        device=reader.text("device", device_id),
        source=reader.text("source", required=True),
        measured=reader.text("measured", required=True),
        owner=reader.text("owner", required=True),
        compute=(compute,),
        bandwidth=(bandwidth,),
    )
    reader.finish()
    return device


def _hardware(top: MappingReader, source: str, evidence: dict) -> HardwareEvidence:
    raw = top.raw("hardware", required=True)
    if isinstance(raw, str):
        return resolve_device(raw, evidence, source, "hardware")
    reader = MappingReader(raw, source, "hardware")
    if not any(reader.has(key) for key in _INLINE_COMPUTE):
        device = resolve_device(reader.text("id", required=True), evidence, source, "hardware.id")
        reader.finish()
        return device
    return _inline_hardware(reader)


def _execution(top: MappingReader) -> ExecutionPolicy:
    reader = top.mapping("execution", required=True)
    policy = ExecutionPolicy(
        count=reader.integer("count", 1),
        liveness=reader.choice("liveness", LIVENESS_POLICIES, required=True),
        retained_copies=reader.integer("retained_copies", 1, minimum=0),
    )
    reader.finish()
    return policy


def _traffic(top: MappingReader) -> TrafficModel:
    reader = top.mapping("traffic", required=True)
    boundary = reader.text("boundary", required=True)
    owner = reader.raw("owner")
    reader.finish()
    return TrafficModel(boundary, owner if isinstance(owner, str) else "")


def _owners(top: MappingReader) -> Owners:
    reader = top.mapping("owners")
    if reader is None:
        return Owners()
    pairs = tuple((key, reader.text(key, required=True)) for key in list(reader.value))
    reader.finish()
    return Owners(pairs)


PLAN_KEYS = (
    "plan_version", "operation", "operation_class", "flop_convention", "broadcast_policy", "inputs",
    "output", "accumulation_dtype", "execution", "traffic", "hardware", "owners", "subscripts", "attention",
)


def _build(top: MappingReader, source: str, evidence: dict):
    top.allow_only(PLAN_KEYS)
    version = top.text("plan_version", required=True)
    if version != PLAN_VERSION:
        raise top.error("plan_version", f"unsupported plan version {version!r} (expected {PLAN_VERSION})")
    operation = top.text("operation", required=True)
    operation_class = top.text("operation_class", required=True)
    convention = top.choice("flop_convention", tuple(FLOP_CONVENTIONS), "fma-2")
    policy = top.choice("broadcast_policy", BROADCAST_POLICIES, "strict")
    inputs = tuple(_tensor(r, "reads") for r in top.records("inputs", required=True))
    output_reader = top.mapping("output", required=True)
    output_name = output_reader.text("name", required=True)
    output_dtype = _dtype(output_reader, "dtype")
    output_writes = output_reader.integer("writes", 1)
    stated_shape = _shape(output_reader, "shape") if output_reader.has("shape") else None
    output_reader.finish()
    accumulation = _dtype(top, "accumulation_dtype", required=False)
    execution = _execution(top)
    traffic = _traffic(top)
    hardware = _hardware(top, source, evidence)
    owners = _owners(top)
    subscripts = top.text("subscripts", None)
    attention = top.mapping("attention")
    if attention is not None:
        if len(inputs) != 3:
            raise top.error("inputs", "an attention plan takes query, key and value")
        form = attention.choice("form", ATTENTION_FORMS, required=True)
        training = attention.boolean("training", False)
        causal = attention.boolean("causal", False)
        score_dtype = _dtype(attention, "score_dtype", required=False) or output_dtype
        attention.finish()
        plan = AttentionPlan(
            operation=operation, form=form, query=inputs[0], key=inputs[1], value=inputs[2],
            output_dtype=output_dtype, score_dtype=score_dtype, training=training, causal=causal,
            accumulation_dtype=accumulation, operation_class=operation_class, flop_convention=convention,
            execution=execution, traffic=traffic, hardware=hardware, owners=owners,
        )
    else:
        if len(inputs) not in (1, 2) or (subscripts is None and len(inputs) != 2):
            raise top.error("inputs", f"a matmul takes 2 inputs and an einsum plan 1 or 2, got {len(inputs)}")
        plan = contraction_plan(
            operation=operation, operation_class=operation_class, inputs=inputs,
            output_name=output_name, output_dtype=output_dtype, output_writes=output_writes,
            accumulation_dtype=accumulation, subscripts=subscripts, flop_convention=convention,
            broadcast_policy=policy, execution=execution, traffic=traffic, hardware=hardware, owners=owners,
        )
    if stated_shape is not None and stated_shape != plan.output.shape:
        raise top.error("output.shape", f"states {list(stated_shape)} but the operation yields {list(plan.output.shape)}")
    top.finish()
    require_evidence(plan)
    return plan


def load_plan(path: Path | str, evidence: dict | None = None, source: str | None = None):
    source = source or str(path)
    document = load_yaml_file(path, source)
    top = MappingReader(document, source)
    try:
        return _build(top, source, evidence or {})
    except EstimatorError as error:
        raise ConfigError(source, error.field, f"{error.trap}: {error.reason}") from None
