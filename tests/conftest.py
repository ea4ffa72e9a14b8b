"""Shared test helpers: the CLI is always driven as a subprocess, as users and CI run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_tensorcost(*args: str, cwd: Path | str | None = None, input: str | None = None, env=None):
    """Run `python -m tensorcost_lint.cli.main ARGS` and return the CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env.pop("TENSORCOST_CACHE_DIR", None)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "tensorcost_lint.cli.main", *args],
        cwd=cwd or ROOT,
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
        env=full_env,
    )


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
