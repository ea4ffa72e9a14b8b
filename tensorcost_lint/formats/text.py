"""`path:line:col: CODE message` lines and the closing summary (Contract 5)."""

from __future__ import annotations

from collections import Counter

from .coverage import coverage_hint, site_coverage
from ..safe_io.printable import printable


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def source_excerpt(lines: list[str], finding) -> list[str]:
    """`--show-source`: the finding's line and a caret under its column (tabs kept, so the caret
    lines up however the terminal draws them)."""
    if not 0 < finding.line <= len(lines):
        return []
    text = lines[finding.line - 1].rstrip("\r\n")
    prefix = text[: max(finding.column - 1, 0)]
    return [text, "".join(ch if ch == "\t" else " " for ch in prefix) + "^"]


def render_text(report, *, statistics: bool = False, resolver=None, quiet: bool = False, source_of=None) -> str:
    """`quiet`: the finding lines only. `source_of(path)`: the file's lines, for `--show-source`."""
    lines = []
    for f in report.findings:
        lines.append(f"{printable(f.path)}:{f.line}:{f.column}: {f.code} {printable(f.message)}")
        if source_of is not None:
            lines.extend(source_excerpt(source_of(f.path), f))
    findings = report.findings
    if quiet:
        return "".join(line + "\n" for line in lines)
    if statistics:
        counts = Counter(f.code for f in findings)
        for code in sorted(counts):
            lines.append(f"{counts[code]:>6}  {code}")
        records = [record for _, _, record in report.numbered_records()]
        resolved = sum(1 for record in records if record["resolved"])
        lines.append(f"call sites: {resolved} resolved / {len(records)} found")
    coverage = site_coverage(report)
    lines.append(summary_line(report, coverage))
    hint = coverage_hint(coverage) if report.files_checked else None
    if hint:
        lines.append(hint)
    return "\n".join(lines) + "\n"


def summary_line(report, coverage=None) -> str:
    """`Found N findings in M files (checked K files; costed S of T call sites)` or `All checks
    passed (...)`: how many sites were costed, so a run that could cost none is no silent pass."""
    if report.files_checked == 0:
        return "No Python files to check (checked 0 files)"
    coverage = coverage or site_coverage(report)
    checked = (f"checked {_plural(report.files_checked, 'file')}; "
               f"costed {coverage.costed} of {_plural(coverage.total, 'call site')}")
    if report.findings:
        files = len({f.path for f in report.findings})
        return f"Found {_plural(len(report.findings), 'finding')} in {_plural(files, 'file')} ({checked})"
    return f"All checks passed ({checked})"
