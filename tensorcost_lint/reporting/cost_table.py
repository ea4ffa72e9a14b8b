"""One row per call site with its modelled cost, sorted by lower bound, and totals per file.

Sorting by the bound puts the sites that cost most time first; sites with numbers but no bound
(no matching evidence) follow, ordered by FLOPs, and unresolved sites come last with their reason.
The sum of bounds is a serial lower bound: each site counted once, as if every call ran one after
another on the device — what a forward pass over these lines costs at least.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from decimal import Decimal

from estimator.units import format_bytes, format_flops, format_seconds, significant
from shape_annotations import render_dim


@dataclass
class SiteRow:
    id: int
    path: str
    line: int
    column: int
    operation: str
    framework: str
    expression: str
    shapes: str
    dtype: str | None
    resolved: bool
    reason: str | None
    flops: int | None
    traffic_bytes: int | None
    intensity: Decimal | None
    bound: Decimal | None
    bottleneck: str | None
    bound_reason: str | None
    operation_class: str | None
    hardware: object = None  # HardwareEvidence used for the bound
    traffic_boundary: str | None = None
    findings: list = field(default_factory=list)
    measured: dict | None = None  # this site's record from `measure --format json`

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    @property
    def measured_seconds(self) -> float | None:
        return None if not self.measured else self.measured.get("measured_median_seconds")


@dataclass
class Totals:
    sites: int = 0
    resolved: int = 0
    bounded: int = 0
    flops: int = 0
    traffic_bytes: int = 0
    bound: Decimal = Decimal(0)
    findings: int = 0

    def add(self, row: SiteRow) -> None:
        self.sites += 1
        self.resolved += row.resolved
        self.flops += row.flops or 0
        self.traffic_bytes += row.traffic_bytes or 0
        if row.bound is not None:
            self.bounded += 1
            self.bound += row.bound


def _dim(dim) -> str:
    return render_dim(dim)  # a Const as its digits, one past 40 digits by its size (never str()'s digit limit)


def shapes_text(site, cost) -> str:
    if cost.resolved and cost.operand_shapes:
        return " x ".join("[" + ",".join(str(d) for d in shape) + "]" for shape in cost.operand_shapes)
    parts = []
    for operand in site.operands:
        shape = getattr(operand, "shape", None)
        parts.append("?" if shape is None else "[" + ", ".join(_dim(d) for d in shape) + "]")
    return " x ".join(parts)


def site_rows(report) -> list[SiteRow]:
    rows = []
    for result in report.results:
        by_site: dict = {}
        for finding in result.findings:
            by_site.setdefault(finding.site, []).append(finding)
        for site_result in result.sites:  # a result with sites was linted here: it carries its settings
            site, cost = site_result.site, site_result.cost
            rows.append(SiteRow(
                id=-1, path=result.path, line=site.line, column=site.column, operation=site.operation,
                framework=site.framework, expression=site.expression, shapes=shapes_text(site, cost),
                dtype=cost.operand_dtypes[0] if cost.resolved and cost.operand_dtypes else None,
                resolved=cost.resolved, reason=cost.reason, flops=cost.flops, traffic_bytes=cost.traffic_bytes,
                intensity=cost.arithmetic_intensity, bound=cost.lower_bound_seconds, bottleneck=cost.bottleneck,
                bound_reason=cost.bound_reason, operation_class=cost.operation_class,
                hardware=result.settings.hardware if cost.resolved else None,
                traffic_boundary=result.settings.traffic_boundary,
                findings=by_site.get(site.id, []),
            ))
    for number, row in enumerate(rows):
        row.id = number  # the same numbering as `check --format json` and `measure`
    return rows


def file_findings(report) -> dict:
    """Findings attached to no call site (parse errors, file-level problems), per file."""
    loose = {r.path: [f for f in r.findings if f.site is None] for r in report.results}
    return {path: findings for path, findings in loose.items() if findings}


def sorted_rows(rows: list[SiteRow]) -> list[SiteRow]:
    def key(row: SiteRow):
        if row.bound is not None:
            return (0, -row.bound, row.id)
        if row.resolved:
            return (1, -(row.flops or 0), row.id)
        return (2, 0, row.id)
    return sorted(rows, key=key)


def totals(rows: list[SiteRow], report) -> tuple[dict, Totals]:
    per_file: dict[str, Totals] = {}
    overall = Totals()
    for row in rows:
        per_file.setdefault(row.path, Totals()).add(row)
        overall.add(row)
    for result in report.results:
        if result.findings:
            per_file.setdefault(result.path, Totals()).findings += len(result.findings)
            overall.findings += len(result.findings)
    return per_file, overall


def attach_measurements(rows: list[SiteRow], records: list[dict]) -> int:
    """Match `measure --format json` records to rows by file, line and column; returns how many
    matched (paths are compared resolved, so `./m.py` and `m.py` agree)."""
    by_place = {}
    for record in records:
        if record.get("path") and record.get("line") is not None:
            place = (os.path.realpath(record["path"]), record["line"], record["column"], record.get("operation"))
            by_place[place] = record
    matched = 0
    for row in rows:
        record = by_place.get((os.path.realpath(row.path), row.line, row.column, row.operation))
        if record is not None:
            row.measured = record
            matched += 1
    return matched


def why_not_costed(rows: list[SiteRow]) -> list[tuple[SiteRow, str]]:
    """Rows without a bound and the reason, for a list under the table (reasons are sentences)."""
    result = []
    for row in sorted(rows, key=lambda r: r.id):
        if not row.resolved:
            result.append((row, f"unresolved: {row.reason}"))
        elif row.bound is None:
            result.append((row, f"no bound: {row.bound_reason}"))
    return result


def seconds_text(value) -> str:
    if value is None:
        return "-"
    return format_seconds(value if isinstance(value, Decimal) else Decimal(repr(value)))


def intensity_text(value) -> str:
    return "-" if value is None else significant(Decimal(value), 4)


def row_cells(row: SiteRow, with_measured: bool) -> list[str]:
    if not row.resolved:
        numbers = ["-"] * 4 + ["unresolved"]
    else:
        numbers = [format_flops(row.flops), format_bytes(row.traffic_bytes), intensity_text(row.intensity),
                   seconds_text(row.bound), row.bottleneck or "no bound"]
    cells = [str(row.id), row.location, row.operation, row.shapes + (f" {row.dtype}" if row.dtype else ""), *numbers]
    if with_measured:
        measured = row.measured_seconds
        ratio = row.measured.get("ratio") if row.measured else None
        cells += [seconds_text(measured), "-" if ratio is None else f"{ratio:.2f}x"]
    cells.append(",".join(sorted({f.code for f in row.findings})) or "-")
    return cells


def table_headers(with_measured: bool) -> list[str]:
    headers = ["#", "location", "operation", "shapes", "FLOPs", "bytes", "FLOP/B", "bound", "bottleneck"]
    return headers + (["measured", "ratio"] if with_measured else []) + ["findings"]


def totals_cells(name: str, t: Totals) -> list[str]:
    return [name, str(t.sites), str(t.resolved), format_flops(t.flops), format_bytes(t.traffic_bytes),
            seconds_text(t.bound) if t.bounded else "-", str(t.findings)]


TOTALS_HEADERS = ["file", "sites", "resolved", "FLOPs", "bytes", "sum of bounds", "findings"]
