"""Realistic model files whose lines say what they must raise: `# TCL201` at the end of a line
expects that finding there (flake8-bugbear style, tests/lint/inline_expectations.py), default
config; a fixture with no such comment must raise nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from shape_annotations import parse_pragma, parse_shape_comment
from shape_annotations.errors import ShapeError
from tensorcost_lint.config.project_config import ProjectConfig
from tensorcost_lint.driver.engine import lint_source

from .inline_expectations import expected_findings, mismatches, without_expectations

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"
CASES = sorted(FIXTURES.glob("*.py"))


def _lint(text: str, name: str):
    return lint_source(text, name, ProjectConfig()).findings


@pytest.mark.parametrize("fixture", CASES, ids=[p.stem for p in CASES])
def test_fixture_raises_exactly_what_its_lines_expect(fixture: Path):
    text = fixture.read_text()
    missing, unexpected = mismatches(text, _lint(text, fixture.name))
    assert (missing, unexpected) == ([], []), f"expected but not found: {missing}; found, not expected: {unexpected}"


@pytest.mark.parametrize("fixture", CASES, ids=[p.stem for p in CASES])
def test_expectation_comments_do_not_change_the_analysis(fixture: Path):
    """Positions and messages too: a `# TCL...` after a shape comment or a pragma is no part of it."""
    text = fixture.read_text()
    stripped = without_expectations(text)
    assert expected_findings(stripped) == [] and stripped.count("\n") == text.count("\n")
    assert [(f.line, f.column, f.code, f.message) for f in _lint(stripped, fixture.name)] == [
        (f.line, f.column, f.code, f.message) for f in _lint(text, fixture.name)]


def test_the_fixtures_expect_every_kind_of_finding_they_were_written_for():
    codes = {code for case in CASES for _, code in expected_findings(case.read_text())}
    assert codes == {"TCL001", "TCL002", "TCL101", "TCL102", "TCL201", "TCL301", "TCL303", "TCL401", "TCL403"}


def test_expectations_are_read_from_comments_only_and_may_name_several_codes():
    text = 'x = "# TCL201"\ny = a @ b  # (B, T)  # TCL002 TCL101\nz = 1  # TCL4 is a prefix, not an expectation\n'
    assert expected_findings(text) == [(2, "TCL002"), (2, "TCL101")]


def _error(parse, comment: str):
    try:
        return parse(comment)
    except ShapeError as error:
        return (error.message, error.offset)


@pytest.mark.parametrize("comment", ["# (B, n_head, T, hs)", "# shape: (B, T, 3C)", "# [batch, pos, d_model]",
                                     "# shape: (B, T, C", "# (B, T) x (T, C) -> (B, C)"])
def test_shape_comment_parser_ignores_a_trailing_expectation(comment: str):
    plain = _error(parse_shape_comment, comment)
    assert plain is not None
    for suffix in ("  # TCL002", " # TCL001 TCL002", "#TCL101"):
        assert _error(parse_shape_comment, comment + suffix) == plain


@pytest.mark.parametrize("comment", ["# tensorcost: dims B=2 T=128", "# tensorcost: dims seq=4k"])
def test_pragma_parser_ignores_a_trailing_expectation(comment: str):
    assert _error(parse_pragma, comment + "  # TCL001") == _error(parse_pragma, comment)


def test_a_comment_that_is_only_an_expectation_is_no_shape_comment():
    assert parse_shape_comment("# TCL201") is None and parse_pragma("# TCL201") is None
