"""Run the `tensorcost` CLI in this process (fast): argv in, (exit code, stdout, stderr) out."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from tensorcost_lint.cli.main import main


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def tensorcost_in(cwd: Path | str, *argv: str, stdin: str | None = None, env: dict | None = None) -> Ran:
    out, err = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    saved_env = {key: os.environ.get(key) for key in (env or {})}
    saved_stdin = sys.stdin
    try:
        os.chdir(cwd)
        os.environ.update(env or {})
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        os.chdir(previous)
        sys.stdin = saved_stdin
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return Ran(code, out.getvalue(), err.getvalue())
