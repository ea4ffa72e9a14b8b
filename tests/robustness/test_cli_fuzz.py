"""Arbitrary command lines: exit 0, 1 or 2, and a 2 is exactly one line on stderr — never a
traceback. The bulk runs `main(argv)` in-process with captured streams (anything escaping `main`
is what a user would see as a traceback); a few run the real console script.

`lsp`, `calibrate` and `measure` are left out of the in-process bulk: with valid arguments they
serve stdin or time the machine, which is not what this test is about.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorcost_lint.cli.main import main

from tests.run_cli import run_tensorcost

from .cli_runs import assert_one_line_error, tensorcost
from .hostile_files import CONFIG, GOOD

ROOT = Path(__file__).resolve().parents[2]
PLAN = ROOT / "examples" / "plans" / "illustrative_attention_scores.yaml"

COMMANDS = ("check", "estimate", "plan", "explain", "report")
FLAGS = ("--config", "--dim", "--hardware", "--select", "--extend-select", "--ignore", "--format", "--output",
         "--exit-zero", "--statistics", "--jobs", "--shapes", "--dtype", "--memory-limit", "--minimize",
         "--evidence", "--version", "--help", "-h", "--no-cache", "--cache-dir", "-", "--", "--bogus")
# No "/" anywhere: `--output` must only ever write inside the test's own directory.
VALUES = st.one_of(
    st.sampled_from(("good.py", "bad.py", "plan.yaml", "tensorcost.yaml", ".", "missing.py", "dir", "TCL401",
                     "TCL4,TCL501", "TCL9999", "ALL", "E999", "text", "json", "sarif", "github", "h100-sxm",
                     "nope-gpu", "seq=8192", "seq=0", "seq=-1", f"seq={10**30}", "seq=1e3", "=", "a=b=c", "é=3",
                     "ij,jk->ik", "ij,jk,kl->il", "ii", "->", "ab,bc", "2x3,3x4", "0x3,3x4", f"{2**40}x{2**40},{2**40}x3",
                     "i=1000", "float16", "bfloat16", "int4", "256MiB", "1e9", "0", "-3", "2", "flops", "size", "",
                     " ", "\x00", "--dim=seq=2", "--format=xml")),
    st.text(alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), max_size=12),
)
ARGV = st.builds(lambda command, rest: [command, *rest], st.sampled_from(COMMANDS + ("", "bogus", "-x")),
                 st.lists(st.one_of(st.sampled_from(FLAGS), VALUES), max_size=8))
SECONDS_PER_COMMAND = 10


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    (root / ".git").mkdir()
    (root / "tensorcost.yaml").write_text(CONFIG)
    (root / "good.py").write_text(GOOD)
    (root / "bad.py").write_text("def broken(:\n")
    (root / "dir").mkdir()
    shutil.copy(PLAN, root / "plan.yaml")
    return root


def run_in_process(argv, cwd) -> tuple[int, str, str]:
    """What a user of the console script would see: exit code, stdout, stderr. An exception that
    escapes `main` is returned as the traceback text it would print, with code -1."""
    out, err = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exit_:  # argparse's --help / --version
                code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
            except BaseException as error:  # noqa: BLE001 - the bug being looked for
                import traceback

                return -1, out.getvalue(), "".join(traceback.format_exception(error))
    finally:
        os.chdir(previous)
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(ARGV)
def test_any_command_line_is_an_exit_code_and_at_most_one_error_line(workdir, argv):
    start = time.process_time()
    code, stdout, stderr = run_in_process(argv, workdir)
    assert code != -1, f"tensorcost {argv!r} raised:\n{stderr}"
    assert code in (0, 1, 2), (argv, code, stderr)
    assert "Traceback" not in stderr, (argv, stderr)
    if code == 2:
        lines = stderr.strip().splitlines()
        assert len(lines) == 1, (argv, stderr)
    assert time.process_time() - start < SECONDS_PER_COMMAND, argv


@pytest.mark.parametrize("argv, fragments", [
    (["check", "--dim", f"seq={10**30}"], ["--dim", "2**63"]),
    (["check", "--dim", "seq=1e3"], ["--dim"]),
    (["check", "--select", "TCL4;rm"], ["--select"]),
    (["check", "--jobs", "0"], ["--jobs"]),
    (["check", "nowhere.py"], ["nowhere.py"]),
    (["check", "--config", "nowhere.yaml"], ["nowhere.yaml"]),
    (["check", "--hardware", "no-such-gpu"], ["no-such-gpu"]),
    (["estimate", "nowhere.yaml"], ["nowhere.yaml"]),
    (["estimate", "good.py"], ["good.py"]),
    (["plan", "ij,jk->ik", "--shapes", f"{10**30}x2,2x3"], ["2**63"]),
    (["plan", "ij,jk->ik", "--shapes", f"{2**40}x{2**40},{2**40}x{2**40}"], ["2**63"]),
    (["plan", "ij,jk->ik"], ["--shapes"]),
    (["explain", "TCL999"], ["TCL999"]),
    # a NUL byte (only an in-process caller can pass one): os.open and realpath raise ValueError
    (["estimate", "\x00"], ["NUL byte", "\\x00"]),
    (["model", "--entry", "m\x00.py:M.forward"], ["NUL byte", "m\\x00.py"]),
    (["frobnicate"], ["frobnicate"]),
    ([], ["tensorcost"]),
])
def test_usage_errors_are_one_line(workdir, argv, fragments):
    """Exit 2, exactly one stderr line naming the problem, no traceback (in process; the real
    process's one line is checked below and in tests/test_entry_points.py)."""
    assert_one_line_error(run_tensorcost(*argv, cwd=workdir), *fragments)


@pytest.mark.parametrize("argv", [["check", "a\nb.py"], ["check", "--dim", "x\r=1"], ["explain", "TCL\n1"]])
def test_a_newline_in_an_argument_stays_on_one_line(workdir, argv):
    # Filenames may hold \n on Linux. ConfigError text should render user values with repr()
    # (or escape control characters) so CI logs keep one line per error.
    assert_one_line_error(tensorcost(*argv, cwd=workdir, timeout=60))


def test_huge_dims_on_the_command_line_are_refused_but_large_ones_work(workdir):
    run = run_tensorcost("check", "good.py", "--dim", f"seq={2**63 - 1}", "--format", "json", cwd=workdir)
    assert run.returncode in (0, 1) and "Traceback" not in run.stderr, run.stderr[-2000:]


def test_an_unwritable_output_is_one_line(workdir):
    assert_one_line_error(run_tensorcost("check", "good.py", "--output", str(workdir / "dir"), cwd=workdir), "--output")


@pytest.mark.skipif(sys.platform != "linux", reason="/dev/full is Linux's")
def test_a_full_disk_on_stdout_is_one_line(workdir):
    with open("/dev/full", "w") as full:
        import subprocess

        result = subprocess.run([sys.executable, "-m", "tensorcost_lint.cli.main", "explain"], cwd=workdir,
                                stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 1, result.stderr
    assert result.returncode != 0


@pytest.mark.parametrize("dims", [f"{{seq: {10**30}}}", "{seq: 0}", "{seq: -8}", "{seq: 1.5}", "{seq: '8'}"])
def test_config_dims_out_of_range_are_one_line(tmp_path, dims):
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {dims}\n")
    (tmp_path / "good.py").write_text(GOOD)
    assert_one_line_error(run_tensorcost("check", "good.py", cwd=tmp_path), "tensorcost.yaml", "dims.seq")


def test_a_file_name_holding_a_nul_byte_is_an_unreadable_file(workdir):
    """Named in a config (`evidence:`, `dims_from:`) rather than on the command line, such a path
    is an OSError like any file that cannot be opened, so its reader's one-line error says so."""
    from tensorcost_lint.safe_io.bounded_read import read_capped

    with pytest.raises(OSError, match="unusable file name"):
        read_capped(workdir / "a\x00b.yaml", 1024)
