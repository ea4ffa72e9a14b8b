"""`path:line:col: CODE message` lines and the closing summary (Contract 5)."""

from __future__ import annotations

from collections import Counter

from .printable import printable


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def render_text(report, *, statistics: bool = False, resolver=None) -> str:
    lines = [f"{printable(f.path)}:{f.line}:{f.column}: {f.code} {printable(f.message)}" for f in report.findings]
    findings = report.findings
    if statistics:
        counts = Counter(f.code for f in findings)
        for code in sorted(counts):
            lines.append(f"{counts[code]:>6}  {code}")
        records = [record for _, _, record in report.numbered_records(resolver)]
        resolved = sum(1 for record in records if record["resolved"])
        lines.append(f"call sites: {resolved} resolved / {len(records)} found")
    if report.files_checked == 0:
        lines.append("No Python files to check (checked 0 files)")
    elif findings:
        files = len({f.path for f in findings})
        lines.append(f"Found {_plural(len(findings), 'finding')} in {_plural(files, 'file')} "
                     f"(checked {_plural(report.files_checked, 'file')})")
    else:
        lines.append(f"All checks passed (checked {_plural(report.files_checked, 'file')})")
    return "\n".join(lines) + "\n"
