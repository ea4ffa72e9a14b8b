"""Reading hardware-evidence YAML (Contract 3) into estimator records, strictly.

The one reader of compute and bandwidth evidence records: evidence files, the shipped datasheets
and a plan file's inline `hardware:` mapping (config/plan_files.py) all go through `read_compute`
and `read_bandwidth`, so a record means and is refused the same wherever it is written.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from estimator import BandwidthEvidence, ComputeEvidence, EstimatorError, HardwareEvidence, normalize_dtype
from estimator.records import FLOP_CONVENTIONS

from ..config.errors import ConfigError
from ..config.byte_sizes import parse_byte_size
from ..config.fields import MappingReader
from ..config.safe_yaml import load_yaml_file, load_yaml_text

SHIPPED_SOURCE = "tensorcost/hardware/datasheets.yaml"


def read_compute(reader: MappingReader, *, finish: bool = True) -> ComputeEvidence:
    """`finish=False` when the record shares its mapping with other keys (a plan's inline hardware):
    the caller then refuses unknown keys once it has read its own."""
    operand = reader.text("operand_dtype", required=True)
    accumulation = reader.text("accumulation_dtype", required=True)
    try:
        record = ComputeEvidence(
            operation_class=reader.text("operation_class", required=True),
            operand_dtype=normalize_dtype(operand, "operand_dtype"),
            accumulation_dtype=normalize_dtype(accumulation, "accumulation_dtype"),
            flop_convention=reader.choice("flop_convention", tuple(FLOP_CONVENTIONS), required=True),
            peak_flops_per_second=reader.number("peak_flops_per_second"),
        )
    except EstimatorError as error:
        raise reader.error(error.field.rpartition(".")[2], error.reason) from None
    if finish:
        reader.finish()
    return record


def read_bandwidth(reader: MappingReader, boundary_key: str = "traffic_boundary", *,
                   finish: bool = True) -> BandwidthEvidence:
    record = BandwidthEvidence(
        traffic_boundary=reader.text(boundary_key, required=True),
        sustained_bytes_per_second=reader.number("sustained_bytes_per_second"),
    )
    if finish:
        reader.finish()
    return record


def _memory_bytes(reader: MappingReader) -> int | None:
    """`memory_bytes: 80GB` (Contract 9): a byte size, as the config's budgets are written."""
    raw = reader.raw("memory_bytes")
    if raw is None:
        return None
    try:
        return parse_byte_size(raw)
    except ValueError as error:
        raise reader.error("memory_bytes", str(error)) from None


def read_device(reader: MappingReader) -> HardwareEvidence:
    try:
        device = HardwareEvidence(
            id=reader.text("id", required=True),
            device=reader.text("device", required=True),
            source=reader.text("source", required=True),
            measured=reader.text("measured", required=True),
            owner=reader.text("owner", required=True),
            compute=tuple(read_compute(r) for r in reader.records("compute")),
            bandwidth=tuple(read_bandwidth(r) for r in reader.records("bandwidth")),
            memory_bytes=_memory_bytes(reader),
        )
    except EstimatorError as error:
        raise reader.error(error.field.rpartition(".")[2], error.reason) from None
    reader.finish()
    return device


def read_evidence_document(document: object, source: str) -> dict[str, HardwareEvidence]:
    top = MappingReader(document, source)
    devices: dict[str, HardwareEvidence] = {}
    for reader in top.records("devices", required=True):
        device = read_device(reader)
        if device.id in devices:
            raise reader.error("id", f"device id {device.id!r} defined twice")
        devices[device.id] = device
    top.finish()
    return devices


def load_evidence_file(path: Path | str, source: str | None = None) -> dict[str, HardwareEvidence]:
    source = source or str(path)
    return read_evidence_document(load_yaml_file(path, source), source)


@lru_cache(maxsize=1)
def shipped_devices() -> dict[str, HardwareEvidence]:
    text = resources.files(__package__).joinpath("datasheets.yaml").read_text(encoding="utf-8")
    return read_evidence_document(load_yaml_text(text, SHIPPED_SOURCE), SHIPPED_SOURCE)


def resolve_device(device_id: str, extra: dict[str, HardwareEvidence], source: str, key: str) -> HardwareEvidence:
    """User evidence first (it may shadow a shipped id on purpose), then the shipped datasheets."""
    if device_id in extra:
        return extra[device_id]
    shipped = shipped_devices()
    if device_id in shipped:
        return shipped[device_id]
    known = ", ".join(sorted({*extra, *shipped}))
    raise ConfigError(source, key, f"unknown hardware id {device_id!r} (known: {known})")
