"""Calibration results → hardware evidence (Contract 3), written so `load_evidence_file` reads it.

The numbers go through the same `HardwareEvidence` records the loader builds, so a file this
module writes is valid by construction; each rate is rounded UP to 4 significant digits, because
rounding a peak down would raise every bound computed from it a little above what was measured.
"""

from __future__ import annotations

import json
from decimal import ROUND_CEILING, Decimal
from pathlib import Path

from estimator import BandwidthEvidence, ComputeEvidence, HardwareEvidence, normalize_dtype
from estimator.units import format_rate, significant

from .. import __version__
from ..config.errors import ConfigError
from .calibration import Calibration, MeasuredRecord


def rounded_up(value: float, digits: int = 4) -> Decimal:
    number = Decimal(repr(value))
    quantum = Decimal(1).scaleb(number.adjusted() - digits + 1)
    return number.quantize(quantum, rounding=ROUND_CEILING)


def rate_text(value: Decimal) -> str:
    """`134.3e9`, the datasheets' spelling: a mantissa and an exponent that is a multiple of 3."""
    exponent = (value.adjusted() // 3) * 3
    mantissa = significant(value.scaleb(-exponent), 6)
    return f"{mantissa}e{exponent}" if exponent else mantissa


def _rate(value: float, unit: str) -> str:
    return format_rate(Decimal(repr(value)), unit)


def _summary(record: MeasuredRecord, unit: str) -> str:
    best = record.best
    t = best.timing
    return (f"{record.key.describe()} {_rate(best.best_rate, unit)} best, median {_rate(best.median_rate, unit)}, "
            f"spread (IQR/median) {t.spread:.0%} ({best.kernel} {best.size}, "
            f"{t.repeats} repeats after {t.warmup} warm-up)")


def evidence_source(calibration: Calibration) -> str:
    """Everything a reader needs to judge the numbers: tool, libraries, threads, how each rate was
    chosen, and each record's median and spread."""
    libraries = "; ".join(
        f"{lib.description}, {lib.threads} thread{'s' if lib.threads != 1 else ''}" if lib.threads
        else lib.description for lib in calibration.libraries)
    records = [_summary(r, "FLOP/s") for r in calibration.compute_records()]
    records += [_summary(r, "B/s") for r in calibration.bandwidth_records()]
    mode = "quick" if calibration.quick else "full"
    return (f"tensorcost calibrate {__version__} ({mode} run): {libraries}. Each rate is the best over its "
            f"repeats and sizes, so bounds hold; " + "; ".join(records))


def calibration_evidence(calibration: Calibration, owner: str) -> HardwareEvidence:
    compute = []
    for record in calibration.compute_records():
        key = record.key
        compute.append(ComputeEvidence(
            operation_class=key.operation_class,
            operand_dtype=normalize_dtype(key.operand_dtype),
            accumulation_dtype=normalize_dtype(key.accumulation_dtype),
            flop_convention="fma-2",
            peak_flops_per_second=rounded_up(record.best.best_rate),
        ))
    bandwidth = [BandwidthEvidence(r.key.traffic_boundary, rounded_up(r.best.best_rate))
                 for r in calibration.bandwidth_records()]
    return HardwareEvidence(
        id=calibration.device_id, device=calibration.device_name, source=evidence_source(calibration),
        measured=calibration.measured, owner=owner, compute=tuple(compute), bandwidth=tuple(bandwidth),
    )


def detail_comment(calibration: Calibration) -> list[str]:
    """Every kernel and size tried, as YAML comments above the device (the loader ignores them)."""
    lines = [f"# {calibration.device_id}: measured by `tensorcost calibrate` on {calibration.measured}.",
             "# Every candidate below; each record takes the best rate of its candidates.",
             f"#   {'record':<28} {'kernel':<40} {'size':<16} {'best':>16} {'median':>16} {'IQR':>6}"]
    for record in calibration.records.values():
        unit = "B/s" if record.key.kind == "bandwidth" else "FLOP/s"
        for m in record.candidates:
            lines.append(f"#   {record.key.describe():<28} {m.kernel:<40} {m.size:<16} "
                         f"{_rate(m.best_rate, unit):>16} {_rate(m.median_rate, unit):>16} {m.timing.spread:>6.0%}")
    for what, why in calibration.skipped:
        lines.append(f"#   not measured: {what}: {why}")
    return lines


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid YAML double-quoted scalar


def device_yaml(device: HardwareEvidence) -> list[str]:
    lines = [f"  - id: {_q(device.id)}", f"    device: {_q(device.device)}", f"    source: {_q(device.source)}",
             f"    measured: {_q(device.measured)}", f"    owner: {_q(device.owner)}", "    compute:"]
    for c in device.compute:
        lines.append(f"      - {{operation_class: {c.operation_class}, operand_dtype: {c.operand_dtype.name}, "
                     f"accumulation_dtype: {c.accumulation_dtype.name}, flop_convention: {c.flop_convention}, "
                     f"peak_flops_per_second: {rate_text(c.peak_flops_per_second)}}}")
    lines.append("    bandwidth:")
    for b in device.bandwidth:
        lines.append(f"      - {{traffic_boundary: {b.traffic_boundary}, "
                     f"sustained_bytes_per_second: {rate_text(b.sustained_bytes_per_second)}}}")
    if not device.compute:
        lines[lines.index("    compute:")] = "    compute: []"
    if not device.bandwidth:
        lines[-1] = "    bandwidth: []"
    return lines


HEADER = """\
# Hardware evidence (Contract 3) written by `tensorcost calibrate`.
# Use it from tensorcost.yaml:  evidence: [{name}]   hardware: {id}   traffic_boundary: {boundary}
"""


def render_evidence(devices: list[HardwareEvidence], comments: dict, path_name: str, boundary: str) -> str:
    first = devices[0].id if devices else ""
    lines = HEADER.format(name=path_name, id=first, boundary=boundary).splitlines() + ["devices:"]
    for device in devices:
        lines += comments.get(device.id, [])
        lines += device_yaml(device)
    return "\n".join(lines) + "\n"


def merged_devices(path: Path, new: HardwareEvidence | None) -> list[HardwareEvidence]:
    """The devices already in `path` (another id kept, the same id replaced), then `new` (None:
    only check that `path` can be merged into).

    A file that exists but is not evidence is refused: calibrate must not overwrite someone's
    config or source file because of a mistyped --out.
    """
    if not path.exists():
        return [new] if new is not None else []
    from ..hardware.evidence_files import load_evidence_file

    try:
        existing = load_evidence_file(path)
    except ConfigError as error:
        raise ConfigError(str(path), "--out", f"exists and is not a hardware-evidence file ({error.reason}); "
                                              "choose another --out") from None
    if new is None:
        return list(existing.values())
    kept = [device for device_id, device in existing.items() if device_id != new.id]
    return kept + [new]
