"""Run the `tensorcost` CLI in this process (fast): argv in, (exit code, stdout, stderr) out."""

from __future__ import annotations

from pathlib import Path

from tests.run_cli import Ran, run_tensorcost

__all__ = ["Ran", "tensorcost_in"]


def tensorcost_in(cwd: Path | str, *argv: str, stdin: str | None = None, env: dict | None = None) -> Ran:
    return run_tensorcost(*argv, cwd=cwd, input=stdin, env=env)
