"""Running the `tensorcost` CLI from tests: in this process (the default: argv in, exit code and
captured streams out, no interpreter start-up), or as a subprocess for the few smoke tests of the
installed entry points and for what only a separate process shows (hash seeds, memory limits)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tensorcost_lint.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
# A developer's own cache location must not leak into a test run, in either mode.
_SCRUBBED = ("TENSORCOST_CACHE_DIR",)


@dataclass
class Ran:
    """What a user sees of one run: the exit code and both streams (as `subprocess.run` gives them)."""

    returncode: int
    stdout: str
    stderr: str


def run_tensorcost(*args: str, cwd: Path | str | None = None, input: str | None = None, env=None) -> Ran:
    """`tensorcost ARGS` in this process: the working directory, stdin, environment additions and
    both streams are the run's own, and restored afterwards."""
    out, err = io.StringIO(), io.StringIO()
    changed = {key: os.environ.get(key) for key in (*_SCRUBBED, *(env or {}))}
    saved_stdin, previous = sys.stdin, os.getcwd()
    try:
        for key in _SCRUBBED:
            os.environ.pop(key, None)
        os.environ.update(env or {})
        os.chdir(cwd or ROOT)
        sys.stdin = io.TextIOWrapper(io.BytesIO((input or "").encode("utf-8", "surrogateescape")), encoding="utf-8")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as stop:  # argparse's --help and --version
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    finally:
        os.chdir(previous)
        sys.stdin = saved_stdin
        for key, value in changed.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return Ran(code, out.getvalue(), err.getvalue())


def run_tensorcost_process(*args: str, cwd: Path | str | None = None, input: str | None = None, env=None,
                           command: tuple[str, ...] | None = None) -> subprocess.CompletedProcess:
    """`python -m tensorcost_lint.cli.main ARGS` (or `command ARGS`, e.g. the installed console
    script) as a subprocess, text streams."""
    full_env = {key: value for key, value in os.environ.items() if key not in _SCRUBBED}
    full_env.update(env or {})
    return subprocess.run(
        [*(command or (sys.executable, "-m", "tensorcost_lint.cli.main")), *args],
        cwd=cwd or ROOT, input=input, capture_output=True, text=True, timeout=120, env=full_env,
    )
