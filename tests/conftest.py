"""Shared test helpers: the CLI runs in this process (tests/run_cli.py), as `main(argv)` with its
streams captured; the few subprocess smoke tests use `run_tensorcost_process`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.run_cli import Ran, run_tensorcost, run_tensorcost_process

__all__ = ["EXAMPLES", "ROOT", "Ran", "assert_one_line_error", "run_tensorcost", "run_tensorcost_process"]

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture
def tensorcost():
    return run_tensorcost


def assert_one_line_error(result, *fragments: str) -> None:
    """Exit 2, exactly one line on stderr, no traceback, naming every fragment."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture(autouse=True)
def _json_output_matches_its_schema(monkeypatch):
    """Every `check --format json` and `model --format json` document a test makes in this process is
    validated against docs/schemas/ as it is made: a field that changes type or goes missing fails
    the test that produced it."""
    try:
        import jsonschema  # noqa: F401 - the test extra; without it the schemas go unchecked
    except ImportError:
        yield
        return
    from tensorcost_lint.cli import model_command
    from tensorcost_lint.formats import json_report
    from tests.docs.json_schemas import CHECK_SCHEMA, MODEL_SCHEMA, validating

    monkeypatch.setattr(json_report, "report_data", validating(json_report.report_data, CHECK_SCHEMA))
    monkeypatch.setattr(model_command, "model_document", validating(model_command.model_document, MODEL_SCHEMA))
    yield
