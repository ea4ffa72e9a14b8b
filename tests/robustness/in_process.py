"""`tensorcost ARGS` run in this process with captured streams: what a user would see, minus the
start-up time of a subprocess. In the working directory the test set (tests/run_cli.py)."""

from __future__ import annotations

import os

from tests.run_cli import Ran, run_tensorcost

Outcome = Ran


def run_main(*argv: str) -> Ran:
    return run_tensorcost(*argv, cwd=os.getcwd())
