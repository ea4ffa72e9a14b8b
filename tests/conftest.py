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
