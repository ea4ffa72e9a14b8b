"""`tensorcost ARGS` run in this process with captured streams: what a user would see, minus the
start-up time of a subprocess."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

from tensorcost_lint.cli.main import main


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str


def run_main(*argv: str) -> Outcome:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(list(argv))
    return Outcome(code, stdout.getvalue(), stderr.getvalue())
