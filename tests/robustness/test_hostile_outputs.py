"""Issue 15: hostile or careless command lines and file names (D5, D6, D12, D13).

`--jobs` beyond the machine, inputs that are FIFOs or endless devices, outputs aimed at the files
the run reads, writes that fail half-way, and file names that carry newlines and escape sequences.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tensorcost_lint.driver import parallel

from .cli_runs import ROOT, assert_one_line_error, clean_env, tensorcost
from .in_process import run_main

EXAMPLE = ROOT / "examples" / "pair_representation.py"
CONFIG = ROOT / "examples" / "tensorcost.yaml"
SOURCE = EXAMPLE.read_text()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copy(EXAMPLE, repo / "m.py")
    shutil.copy(CONFIG, repo / "tensorcost.yaml")
    monkeypatch.chdir(repo)
    monkeypatch.delenv("TENSORCOST_CACHE_DIR", raising=False)
    return repo


# D5 ------------------------------------------------------------------------------------------


def test_d5_jobs_is_capped_by_files_and_cpus(repo: Path, monkeypatch):
    for index in range(4):
        shutil.copy(EXAMPLE, repo / f"copy{index}.py")
    started = []

    class RecordingPool(parallel.ProcessPoolExecutor):
        def __init__(self, max_workers=None, **kwargs):
            started.append(max_workers)
            assert max_workers <= os.cpu_count(), "would start one process per job"  # before any spawn
            super().__init__(max_workers=max_workers, **kwargs)

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", RecordingPool)
    serial = run_main("check", ".", "--format", "json", "--no-cache")
    wide = run_main("check", ".", "--format", "json", "--no-cache", "--jobs", "3000")
    assert (wide.returncode, wide.stdout) == (serial.returncode, serial.stdout)
    expected = min(5, parallel.available_cpus())
    assert started == ([expected] if expected > 1 else [])


def test_d5_worker_count_is_the_smallest_of_jobs_files_and_cpus(monkeypatch):
    monkeypatch.setattr(parallel, "available_cpus", lambda: 16)
    assert [parallel.worker_count(jobs, files) for jobs, files in
            ((3000, 5), (3000, 100), (4, 100), (8, 1), (2, 0))] == [5, 16, 4, 1, 1]


# D6 ------------------------------------------------------------------------------------------


def test_d6_report_measurements_fifo_exits_2_instead_of_blocking(repo: Path):
    os.mkfifo(repo / "measure.json")
    run = tensorcost("report", "m.py", "--measurements", "measure.json", cwd=repo, timeout=120)
    assert not run.timed_out, "blocked reading the FIFO"
    assert_one_line_error(run, "measure.json: --measurements: cannot read: not a regular file (a FIFO)")


def test_d6_report_measurements_dev_zero_exits_2_without_memory_error(repo: Path):
    run = tensorcost("report", "m.py", "--measurements", "/dev/zero", cwd=repo, timeout=120, memory_limit_mib=1024)
    assert_one_line_error(run, "/dev/zero: --measurements: cannot read: not a regular file (a character device)")


def test_d6_huge_pyproject_toml_is_refused_not_read_whole(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "m.py").write_text(SOURCE)
    with open(repo / "pyproject.toml", "wb") as stream:
        stream.truncate(3 << 30)  # sparse: 3 GiB that cost no disk
    run = tensorcost("check", "m.py", "--no-cache", cwd=repo, timeout=120, memory_limit_mib=1024)
    assert_one_line_error(run, "pyproject.toml: file larger than 1048576 bytes")


# D12 -----------------------------------------------------------------------------------------


def test_d12_check_output_refuses_to_overwrite_the_analysed_file(repo: Path):
    outcome = run_main("check", "--output", "m.py", "m.py", "--no-cache")
    assert outcome.returncode == 2
    assert outcome.stderr == "tensorcost: error: m.py: --output: refusing to overwrite an analysed source file\n"
    assert (repo / "m.py").read_text() == SOURCE


def test_d12_check_output_refuses_a_link_to_an_analysed_file_and_the_config(repo: Path):
    os.symlink("m.py", repo / "report.txt")
    outcome = run_main("check", "--output", "report.txt", ".", "--no-cache")
    assert outcome.stderr == "tensorcost: error: report.txt: --output: refusing to overwrite an analysed source file\n"
    config = CONFIG.read_text()
    for argv in (("--output", "tensorcost.yaml", "m.py"),
                 ("--config", "tensorcost.yaml", "--output", "tensorcost.yaml", "m.py")):
        outcome = run_main("check", *argv, "--no-cache")
        assert (outcome.returncode, outcome.stderr) == (
            2, "tensorcost: error: tensorcost.yaml: --output: refusing to overwrite the config file in use\n")
    assert (repo / "m.py").read_text() == SOURCE and (repo / "tensorcost.yaml").read_text() == config


@pytest.mark.parametrize("flag", ["--html", "--output"])
def test_d12_report_refuses_to_overwrite_the_analysed_file(repo: Path, flag: str):
    outcome = run_main("report", flag, "m.py", "m.py")
    assert outcome.returncode == 2
    assert outcome.stderr == f"tensorcost: error: m.py: {flag}: refusing to overwrite an analysed source file\n"
    assert (repo / "m.py").read_text() == SOURCE


def test_d12_check_output_still_writes_reports_and_devices(repo: Path):
    first = run_main("check", "m.py", "--no-cache", "--output", "report.txt")
    assert first.returncode == 1 and first.stdout == ""
    assert (repo / "report.txt").read_text() == run_main("check", "m.py", "--no-cache").stdout
    assert run_main("check", "m.py", "--no-cache", "--output", os.devnull).returncode == 1


def test_d12_estimate_output_refuses_to_overwrite_its_plan_file(tmp_path: Path, monkeypatch):
    plan = ROOT / "examples" / "plans" / "illustrative_attention_scores.yaml"
    shutil.copy(plan, tmp_path / "plan.yaml")
    monkeypatch.chdir(tmp_path)
    outcome = run_main("estimate", "plan.yaml", "--output", "plan.yaml")
    assert (outcome.returncode, outcome.stderr) == (
        2, "tensorcost: error: plan.yaml: --output: refusing to overwrite the plan file\n")
    assert (tmp_path / "plan.yaml").read_text() == plan.read_text()


def _limit_file_size(max_bytes: int):
    def apply():  # Python ignores SIGXFSZ: a write past the limit fails with EFBIG, like a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))
    return apply


def test_d12_failed_write_keeps_the_previous_report(repo: Path):
    (repo / "report.txt").write_text("previous report\n")
    result = subprocess.run(
        [sys.executable, "-m", "tensorcost_lint.cli.main", "check", "m.py", "--no-cache", "--output", "report.txt"],
        cwd=repo, env=clean_env(), capture_output=True, text=True, timeout=120, preexec_fn=_limit_file_size(100))
    assert_one_line_error(result, "report.txt: --output: cannot write: File too large")
    assert (repo / "report.txt").read_text() == "previous report\n"
    assert sorted(p.name for p in repo.iterdir()) == [".git", "m.py", "report.txt", "tensorcost.yaml"]


# D13 -----------------------------------------------------------------------------------------

HOSTILE_NAME = "x\n::error title=pwned::owned\x1b[2K%,.py"
BROKEN = "import torch\n\ndef broken(:\n    return torch.einsum('ij,jk->ik', a, b)\n"


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / HOSTILE_NAME).write_text(BROKEN)
    monkeypatch.chdir(root)
    return root


def test_d13_text_output_escapes_newline_and_escape_in_file_names(hostile: Path):
    outcome = run_main("check", ".", "--no-cache")
    assert outcome.stdout == (
        "./x\\n::error title=pwned::owned\\x1b[2K%,.py:3:12: E999 SyntaxError: invalid syntax\n"
        "Found 1 finding in 1 file (checked 1 file; costed 0 of 0 call sites)\n")


def test_d13_github_output_escapes_properties_and_control_characters(hostile: Path):
    outcome = run_main("check", ".", "--no-cache", "--format", "github")
    assert outcome.stdout == (
        "::error file=x%0A%3A%3Aerror title=pwned%3A%3Aowned\\x1b[2K%25%2C.py,line=3,col=12,title=E999"
        "::SyntaxError: invalid syntax\n"
        "Found 1 finding in 1 file (checked 1 file; costed 0 of 0 call sites)\n")
    assert "\x1b" not in outcome.stdout and outcome.stdout.count("\n") == 2


def test_d13_messages_that_echo_source_text_are_escaped():
    from tensorcost_lint.rules.findings import Finding
    from tensorcost_lint.formats.github import annotation
    from tensorcost_lint.formats.text import render_text
    from tensorcost_lint.driver.engine import LintResult
    from tensorcost_lint.driver.runner import Report

    finding = Finding("m.py", 1, 1, "TCL401", "warning", "`q @ k` says \x1b]0;title\x07\u202eevil\r\nnext")
    report = Report(files_checked=1, results=[LintResult("m.py", findings=[finding])])
    assert render_text(report).splitlines()[0] == "m.py:1:1: TCL401 `q @ k` says \\x1b]0;title\\x07\\u202eevil\\r\\nnext"
    assert annotation(finding) == ("::warning file=m.py,line=1,col=1,title=TCL401::`q @ k` says "
                                   "\\x1b]0;title\\x07\\u202eevil%0D%0Anext")


def test_d13_report_table_escapes_file_names(tmp_path: Path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "a\n::error::x\x1b[31m.py").write_text("import torch\n\n\ndef f(a, b):\n    return a @ b\n")
    monkeypatch.chdir(tmp_path)
    outcome = run_main("report", ".")
    assert outcome.returncode == 0 and "\x1b" not in outcome.stdout
    assert not any(line.startswith("::") for line in outcome.stdout.splitlines())
    assert "./a\\n::error::x\\x1b[31m.py:5:12" in outcome.stdout
