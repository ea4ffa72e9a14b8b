"""One self-contained HTML page: the roofline picture (inline SVG), the site table, totals and
every finding. No script, no external file or font: it can be attached to a CI run or a review
and opened anywhere, years later, as it was.
"""

from __future__ import annotations

import datetime as _dt
from html import escape

from .. import __version__
from .cost_table import (
    TOTALS_HEADERS,
    row_cells,
    sorted_rows,
    table_headers,
    totals_cells,
    why_not_costed,
)
from .text_report import device_line

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1500px;
       color: #1d1d1f; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 2em; }
.meta { color: #666; margin-top: 0; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #e5e5e5; vertical-align: top; }
th { background: #f6f6f6; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:target { background: #fff6d5; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; }
.violated { color: #c62828; font-weight: 600; }
.COMPUTE { color: #1565c0; } .TRAFFIC { color: #6d4c41; }
.finding { margin: 0.3em 0; } .code { font-weight: 600; }
.error .code { color: #c62828; } .warning .code { color: #ef6c00; } .info .code { color: #1565c0; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
"""

NUMERIC = {"FLOPs", "bytes", "FLOP/B", "bound", "measured", "ratio", "sites", "resolved", "sum of bounds"}


def _svg_body(svg: str) -> str:
    """The <svg> element alone: matplotlib's XML declaration and DOCTYPE are not valid inside HTML."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""


def _table(headers, rows, row_ids=None) -> list[str]:
    html = ["<table>", "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in headers) + "</tr>"]
    for index, cells in enumerate(rows):
        anchor = f' id="{row_ids[index]}"' if row_ids else ""
        tds = []
        for header, cell in zip(headers, cells):
            css = ' class="num"' if header in NUMERIC else ""
            tds.append(f"<td{css}>{cell}</td>")
        html.append(f"<tr{anchor}>" + "".join(tds) + "</tr>")
    html.append("</table>")
    return html


def _site_cells(row, with_measured: bool) -> list[str]:
    cells = [escape(c) for c in row_cells(row, with_measured)]
    headers = table_headers(with_measured)
    cells[headers.index("location")] = (f'<a href="#site-{row.id}">{escape(row.location)}</a><br>'
                                        f"<code>{escape(row.expression)}</code>")
    bottleneck = headers.index("bottleneck")
    if row.bottleneck:
        cells[bottleneck] = f'<span class="{row.bottleneck}">{escape(row.bottleneck)}</span>'
    if with_measured and row.measured and row.measured.get("status") == "EVIDENCE VIOLATED":
        ratio = headers.index("ratio")
        cells[ratio] = f'<span class="violated">{cells[ratio]} evidence violated</span>'
    codes = sorted({f.code for f in row.findings})
    if codes:
        cells[-1] = " ".join(f'<a href="#finding-{row.id}-{code}">{escape(code)}</a>' for code in codes)
    return cells


def _finding_html(finding, site_id, anchor: bool) -> str:
    link = f' (<a href="#site-{site_id}">site #{site_id}</a>)' if site_id is not None else ""
    ident = f' id="finding-{site_id}-{finding.code}"' if anchor else ""
    where = f"{escape(finding.path)}:{finding.line}:{finding.column}"
    return (f'<div class="finding {escape(finding.severity)}"{ident}><span class="code">{escape(finding.code)}</span> '
            f"<code>{where}</code>{link}: {escape(finding.message)}</div>")


def render_html(rows, per_file, overall, loose_findings: dict, picture_svg: str, *, with_measured: bool) -> str:
    ordered = sorted_rows(rows)
    generated = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f"<title>tensorcost report: {overall.sites} call sites</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
        "<h1>tensorcost report</h1>",
        f'<p class="meta">{overall.sites} call sites in {len(per_file)} files, {overall.resolved} resolved, '
        f"{overall.findings} findings &middot; {escape(device_line(rows))} &middot; generated {generated} by "
        f"tensorcost {escape(__version__)}</p>",
        "<h2>Roofline</h2>", f"<figure>{_svg_body(picture_svg)}</figure>",
        "<h2>Call sites, by lower bound</h2>",
    ]
    parts += _table(table_headers(with_measured), [_site_cells(r, with_measured) for r in ordered],
                    [f"site-{r.id}" for r in ordered])
    missing = why_not_costed(rows)
    if missing:
        parts.append("<h2>Sites without a bound</h2>")
        parts += [f'<div class="finding"><a href="#site-{r.id}">#{r.id}</a> <code>{escape(r.location)}</code>: '
                  f"{escape(reason)}</div>" for r, reason in missing]
    parts.append("<h2>Totals</h2>")
    total_rows = [[escape(c) for c in totals_cells(path, t)] for path, t in sorted(per_file.items())]
    total_rows.append([f"<strong>{escape(c)}</strong>" for c in totals_cells("all files", overall)])
    parts += _table(TOTALS_HEADERS, total_rows)
    parts.append("<p class=\"meta\">Sum of bounds: every site once, one after another — a serial lower bound, "
                 "never a latency forecast.</p>")
    parts.append("<h2>Findings</h2>")
    findings = [(f, r.id) for r in sorted(rows, key=lambda r: (r.path, r.line, r.column)) for f in r.findings]
    findings += [(f, None) for path in sorted(loose_findings) for f in loose_findings[path]]
    if not findings:
        parts.append("<p>No findings.</p>")
    seen = set()
    for finding, site_id in findings:
        key = (site_id, finding.code)
        parts.append(_finding_html(finding, site_id, anchor=site_id is not None and key not in seen))
        seen.add(key)
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"
