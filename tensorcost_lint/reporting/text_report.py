"""The report as text: the site table, then totals per file and for everything checked."""

from __future__ import annotations

from ..safe_io.printable import printable
from .cost_table import TOTALS_HEADERS, row_cells, sorted_rows, table_headers, totals_cells, why_not_costed


def _table(headers, rows) -> list[str]:
    rows = [[printable(cell) for cell in row] for row in rows]  # a file name cannot add a line
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    widths[-1] = 0  # the last column is never padded
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return lines


def device_line(rows) -> str:
    devices = {}
    for row in rows:
        if row.hardware is not None:
            devices.setdefault(row.hardware.id, (row.hardware, row.traffic_boundary))
    if not devices:
        return "hardware: none (no resolved site)"
    parts = [f"{d.id} ({d.device}; {d.measured}; traffic across {boundary})" for d, boundary in devices.values()]
    return "hardware: " + ", ".join(parts)


def render_report_text(rows, per_file, overall, *, with_measured: bool = False) -> str:
    lines = [device_line(rows), ""]
    lines += _table(table_headers(with_measured), [row_cells(r, with_measured) for r in sorted_rows(rows)])
    missing = why_not_costed(rows)
    if missing:
        lines += ["", "sites without a bound:"]
        lines += [printable(f"  #{row.id} {row.location}: {reason}") for row, reason in missing]
    lines.append("")
    total_rows = [totals_cells(path, t) for path, t in sorted(per_file.items())]
    total_rows.append(totals_cells("all files", overall))
    lines += _table(TOTALS_HEADERS, total_rows)
    lines.append("")
    lines.append("sum of bounds: every site once, one after another (a serial lower bound, not a forecast)")
    return "\n".join(lines) + "\n"
