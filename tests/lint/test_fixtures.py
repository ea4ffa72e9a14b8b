"""Realistic model files beside the exact findings they must produce (TorchFix's layout): each
`fixtures/lint/NAME.py` has `NAME.txt` holding `line:col CODE message` lines, default config."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensorcost_lint.config.project_config import ProjectConfig
from tensorcost_lint.engine import lint_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"
CASES = sorted(FIXTURES.glob("*.py"))


def render(path: Path) -> list[str]:
    result = lint_source(path.read_text(), path.name, ProjectConfig())
    return [f"{f.line}:{f.column} {f.code} {f.message}" for f in result.findings]


@pytest.mark.parametrize("fixture", CASES, ids=[p.stem for p in CASES])
def test_fixture_findings_exactly(fixture: Path):
    expected = fixture.with_suffix(".txt").read_text().splitlines()
    assert render(fixture) == expected
