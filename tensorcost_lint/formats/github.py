"""`--format github`: one GitHub Actions workflow command per finding, so findings show as
annotations on the pull request's diff without uploading anything.

    ::warning file=model.py,line=11,col=14,endLine=11,endColumn=37,title=TCL401::quadratic ...

GitHub parses these lines out of the job log; a message or property that is not escaped is cut
at the first newline (or, in a property, at the first `,` or `:`), so every value is escaped with
the runner's own rules (actions/toolkit `command.ts`).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..safe_io.printable import printable
from .text import summary_line

# GitHub has three annotation levels; our `info` (the TCL501 ledger) is a notice.
LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    # GitHub decodes only %25, %0D, %0A (and %3A, %2C in properties): ESC and other controls
    # would reach the log raw, so they are shown as escapes first.
    return printable(text, keep="\r\n").replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(path: str) -> str:
    """The path GitHub matches against the checkout: relative to the working directory (the
    workspace in Actions), `/`-separated, no leading `./`. A path outside it stays absolute."""
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            candidate = candidate.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            return candidate.as_posix()
    return os.path.normpath(str(candidate)).replace(os.sep, "/")


def annotation(finding) -> str:
    properties = [("file", workspace_path(finding.path)), ("line", str(finding.line)), ("col", str(finding.column))]
    if finding.end_line is not None:
        properties.append(("endLine", str(finding.end_line)))
        # GitHub honours a column range only on a single line.
        if finding.end_column is not None and finding.end_line == finding.line:
            properties.append(("endColumn", str(finding.end_column)))
    properties.append(("title", finding.code))
    rendered = ",".join(f"{name}={escape_property(value)}" for name, value in properties)
    return f"::{LEVELS.get(finding.severity, 'warning')} {rendered}::{escape_data(finding.message)}"


def _summary(report) -> str:
    """The text format's closing line, word for word (one wording in every log)."""
    return summary_line(report)


def render_github(report) -> str:
    """Annotations, then one plain summary line for the log (a line that is not a command is
    printed as is)."""
    lines = [annotation(finding) for finding in report.findings]
    lines.append(_summary(report))
    return "\n".join(lines) + "\n"
