"""Lint a snippet the way users' files are linted: a config dict validated like tensorcost.yaml."""

from __future__ import annotations

import textwrap

from tensorcost_lint.config.project_config import parse_config
from tensorcost_lint.engine import lint_source


def lint(source: str, config: dict | None = None, path: str = "model.py"):
    parsed = parse_config(config or {}, "test-config", None)
    return lint_source(textwrap.dedent(source), path, parsed)


def codes(source: str, config: dict | None = None) -> list[str]:
    return [f.code for f in lint(source, config).findings]


def lines(source: str, config: dict | None = None) -> list[str]:
    """`line:col CODE` for each finding (TorchFix's fixture format without the message)."""
    return [f"{f.line}:{f.column} {f.code}" for f in lint(source, config).findings]


def site_by_line(result, line: int):
    matches = [s for s in result.sites if s.site.line == line]
    assert len(matches) == 1, [(s.site.line, s.site.expression) for s in result.sites]
    return matches[0]
