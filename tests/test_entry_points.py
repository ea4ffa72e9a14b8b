"""Smoke tests of the installed entry points, each run as its own process as users run it. The
rest of the suite calls the CLI's `main(argv)` in process (tests/run_cli.py); these prove that a
real process prints the same. The other entry points have theirs beside their tests: the flake8
extension (tests/adapters/test_flake8_plugin.py), `tensorcost lsp`
(tests/adapters/test_language_server.py) and the pre-commit hook (tests/adapters/test_pre_commit_hook.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, assert_one_line_error, run_tensorcost, run_tensorcost_process

CONSOLE_SCRIPT = Path(sys.executable).parent / "tensorcost"


def test_console_script_prints_what_main_returns():
    if not CONSOLE_SCRIPT.is_file():
        pytest.skip(f"no `tensorcost` console script beside {sys.executable}")
    argv = ("check", str(EXAMPLES), "--format", "json", "--no-cache")
    process = run_tensorcost_process(*argv, command=(str(CONSOLE_SCRIPT),))
    in_process = run_tensorcost(*argv)
    assert process.returncode == in_process.returncode == 1, process.stderr
    assert (process.stdout, process.stderr) == (in_process.stdout, in_process.stderr)


def test_module_entry_exits_2_with_one_line_and_no_traceback():
    process = run_tensorcost_process("check", str(EXAMPLES), "--select", "TCL999", "--no-cache")
    assert_one_line_error(process, "--select", "TCL999")
    assert process.stderr == run_tensorcost("check", str(EXAMPLES), "--select", "TCL999", "--no-cache").stderr


def test_version_and_help_exit_0_in_both_modes():
    for argv in (("--version",), ("check", "--help")):
        process, in_process = run_tensorcost_process(*argv), run_tensorcost(*argv)
        assert (process.returncode, process.stdout) == (in_process.returncode, in_process.stdout) and process.returncode == 0
