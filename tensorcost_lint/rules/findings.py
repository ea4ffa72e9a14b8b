"""Findings: what the user sees, in every output format."""

from __future__ import annotations

from dataclasses import dataclass, field

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Fix:
    """A safe, mechanical edit: replace [start, end) (1-based line/column) with `replacement`."""

    description: str
    line: int
    column: int
    end_line: int
    end_column: int
    replacement: str


@dataclass(frozen=True)
class Finding:
    path: str
    line: int  # 1-based
    column: int  # 1-based
    code: str
    severity: str
    message: str
    site: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    fix: Fix | None = field(default=None, compare=False)

    def sort_key(self):
        return (self.path, self.line, self.column, self.code, self.message)
