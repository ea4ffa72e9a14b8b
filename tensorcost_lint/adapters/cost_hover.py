"""The cost ledger of one call site as Markdown, for the language server's hover.

Built from `site_record` — the record `--format json` writes — so the editor and the JSON report
never disagree about a number. Shapes are shown with their names *and* the sizes bound to them,
and the hardware evidence is named with its source and date: a bound whose evidence you cannot
see is a bound you cannot trust.
"""

from __future__ import annotations

from decimal import Decimal

from estimator.units import format_bytes, format_flops, format_rate, format_seconds, significant

from ..formats.site_records import site_record
from ..rules.messages import sized_shape


def site_at(sites, line: int, column: int):
    """The innermost site whose range holds (line, column), 1-based, or None. Innermost, so that
    hovering `a @ b` inside `(a @ b) @ c` shows the inner product."""
    best, best_size = None, None
    for site_result in sites:
        site = site_result.site
        start, end = (site.line, site.column), (site.end_line, site.end_column)
        if not (start <= (line, column) < end):
            continue
        size = (site.end_line - site.line, site.end_column - site.column if site.end_line == site.line else 0)
        if best is None or size < best_size:
            best, best_size = site_result, size
    return best


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _shapes_table(site, record, sizes) -> list[str]:
    rows = ["| | shape | dtype |", "|---|---|---|"]
    for index, (operand, described) in enumerate(zip(site.operands, record["operands"])):
        shape = getattr(operand, "shape", None)
        shape_text = f"`{sized_shape(shape, sizes)}`" if shape is not None else "unknown"
        rows.append(f"| operand {index + 1} | {_cell(shape_text)} | {described['dtype'] or 'unknown'} |")
    if site.shapes is not None and site.shapes.output_shape is not None and record["output"] is not None:
        output = f"`{sized_shape(site.shapes.output_shape, sizes)}`"
        rows.append(f"| **output** | {_cell(output)} | {record['output']['dtype'] or 'unknown'} |")
    return rows


def _evidence_lines(cost, settings) -> list[str]:
    hardware = settings.hardware
    lines = [f"**Hardware evidence** `{hardware.id}`: {hardware.device} — {hardware.source}; "
             f"measured {hardware.measured}, owner {hardware.owner}"]
    compute = cost.compute_evidence
    if compute is not None:
        lines.append(f"- compute: {compute.operation_class}, {compute.operand_dtype.name} operands → "
                     f"{compute.accumulation_dtype.name} accumulation ({compute.flop_convention}): "
                     f"{format_rate(compute.peak_flops_per_second, 'FLOP/s')} peak")
    bandwidth = cost.bandwidth_evidence
    if bandwidth is not None:
        lines.append(f"- bandwidth: {bandwidth.traffic_boundary}: "
                     f"{format_rate(bandwidth.sustained_bytes_per_second, 'B/s')} sustained")
    return lines


def _ledger_rows(record, settings) -> list[str]:
    symbolic = record["flops_formula"] and not record["flops_formula"].isdigit()  # all dims literal: no formula
    formula = f" = `{record['flops_formula']}`" if symbolic else ""
    rows = ["| | |", "|---|---|",
            f"| FLOPs | {format_flops(record['flops'])}{formula} ({record['flops']:,}) |",
            f"| output bytes | {format_bytes(record['output_bytes'])} |",
            f"| traffic | {format_bytes(record['traffic_bytes'])} across {settings.traffic_boundary} |",
            f"| retained | {format_bytes(record['retained_bytes'])} |"]
    if record["arithmetic_intensity"] is not None:
        intensity = significant(Decimal(str(record["arithmetic_intensity"])), 4)
        rows.append(f"| arithmetic intensity | {intensity} FLOP/B |")
    if record["lower_bound_seconds"] is not None:
        bound = format_seconds(Decimal(str(record["lower_bound_seconds"])))
        rows.append(f"| lower bound | **{bound}** on `{record['hardware']}`, {record['bottleneck']}-bound |")
    else:
        rows.append(f"| lower bound | none: {_cell(record['bound_reason'] or 'no matching hardware evidence')} |")
    if record["accumulation_dtype"]:
        rows.append(f"| accumulation | {record['accumulation_dtype']} |")
    return rows


def hover_markdown(site_result, settings, sizes, findings=()) -> str:
    """`settings`: the `LintSettings` the file was linted under (`LintResult.settings`), so the
    hover shows the numbers of that lint, on the hardware it used."""
    site, cost = site_result.site, site_result.cost
    record = site_record(site.id, settings.path, site_result, settings)
    parts = [f"**tensorcost** · {site.operation} `{_cell(site.expression)}` ({site.framework}, `{site.function}`)",
             "", *_shapes_table(site, record, sizes), ""]
    if not cost.resolved:
        parts.append(f"**Not costed:** {record['reason']}")
    else:
        parts += _ledger_rows(record, settings)
        execution = record.get("execution")
        if execution is not None:
            path_text = f", path {execution['path']}" if execution["path"] else ""
            parts += ["", f"Executed as {execution['description']}{path_text}."]
        parts += ["", *_evidence_lines(cost, settings)]
    here = [f for f in findings if f.site == site.id]
    if here:
        parts += ["", "Findings here: " + ", ".join(f"`{f.code}`" for f in here)]
    if record["plan_id"]:
        parts += ["", f"plan `{record['plan_id']}`"]
    return "\n".join(parts)
