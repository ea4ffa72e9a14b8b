"""ruff/flake8 conventions on `tensorcost check`: stdin, per-file and extended ignores, kebab-case
keys, `.gitignore`-aware walking, `--extend-exclude`, `--quiet` and `--show-source`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.inprocess import tensorcost_in

ATTENTION = '''from jaxtyping import Float
from torch import Tensor


def scores(q: Float[Tensor, "batch heads seq d_head"], k: Float[Tensor, "batch heads seq d_head"]):
    return q @ k.transpose(-2, -1)
'''
CONFIG = "dims: {batch: 8, heads: 16, seq: 8192, d_head: 128}\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text(CONFIG)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "attention.py").write_text(ATTENTION)
    return tmp_path


def _located(stdout: str) -> list[str]:
    return [line.split(": ", 1)[0] + " " + line.split()[1] for line in stdout.splitlines() if ": TCL" in line]


def check(repo, *args, stdin=None):
    return tensorcost_in(repo, "check", "--no-cache", *args, stdin=stdin)


# -- stdin ---------------------------------------------------------------------------------------

def test_stdin_with_a_filename_uses_that_name_for_output_and_config(repo):
    (repo / "model" / "tensorcost.yaml").write_text("dims: {batch: 1, heads: 1, seq: 8, d_head: 2}\n")
    sub = check(repo, "-", "--stdin-filename", "model/attention.py", stdin=ATTENTION)
    assert (sub.returncode, sub.stdout) == (0, "All checks passed (checked 1 file; costed 1 of 1 call site)\n")
    top = check(repo, "-", "--stdin-filename", "other.py", stdin=ATTENTION.replace("seq", "seq"))
    assert _located(top.stdout) == ["other.py:6:12 TCL401", "other.py:6:12 TCL402"]


def test_stdin_without_a_filename_is_named_dash(repo):
    result = check(repo, "-", stdin=ATTENTION)
    assert result.returncode == 1 and _located(result.stdout) == ["-:6:12 TCL401", "-:6:12 TCL402"]
    assert result.stdout.splitlines()[-1] == "Found 2 findings in 1 file (checked 1 file; costed 1 of 1 call site)"


@pytest.mark.parametrize("args, fragment", [
    (["-", "model"], "stdin (`-`) cannot be checked together with other paths"),
    (["model", "--stdin-filename", "x.py"], "--stdin-filename: x.py: only applies when the path is `-`"),
    (["-", "--fix"], "--fix: -: cannot write a fix back to stdin"),
])
def test_stdin_usage_errors(repo, args, fragment):
    result = check(repo, *args, stdin=ATTENTION)
    assert result.returncode == 2 and fragment in result.stderr and len(result.stderr.splitlines()) == 1


# -- ignores -------------------------------------------------------------------------------------

@pytest.mark.parametrize("config", [
    "per_file_ignores: {'model/*': [TCL402]}\n",
    "per-file-ignores: {'attention.py': [TCL402]}\n",
    "per_file_ignores: {'model/attention.py': 'TCL402'}\n",
    "extend_ignore: [TCL402]\n",
    "extend-ignore: [TCL40]\nextend-select: [TCL401]\n",
])
def test_config_ignores(repo, config):
    (repo / "tensorcost.yaml").write_text(CONFIG + config)
    assert _located(check(repo, "model").stdout) == ["model/attention.py:6:12 TCL401"]


def test_per_file_ignores_globs_are_relative_to_the_config_file(repo):
    (repo / "tensorcost.yaml").write_text(CONFIG + "per_file_ignores: {'model/*': [TCL4]}\n")
    (repo / "model" / "sub").mkdir()
    (repo / "model" / "sub" / "a.py").write_text(ATTENTION)
    (repo / "elsewhere").mkdir()
    (repo / "elsewhere" / "a.py").write_text(ATTENTION)
    result = tensorcost_in(repo / "elsewhere", "check", "--no-cache", ".", "../model")
    assert _located(result.stdout) == ["./a.py:6:12 TCL401", "./a.py:6:12 TCL402"]


@pytest.mark.parametrize("args", [["--per-file-ignores", "model/*:TCL402"], ["--per-file-ignores", "x.py:TCL1 attention.py:TCL402"],
                                  ["--extend-ignore", "TCL402"], ["--ignore", "TCL9", "--extend-ignore", "TCL402"]])
def test_cli_ignores(repo, args):
    assert _located(check(repo, *args, "model").stdout) == ["model/attention.py:6:12 TCL401"]


def test_bad_per_file_ignores_entry(repo):
    result = check(repo, "--per-file-ignores", "model/*", "model")
    assert result.returncode == 2 and "--per-file-ignores: model/*: expected GLOB:CODES" in result.stderr


# -- kebab-case keys -----------------------------------------------------------------------------

def test_kebab_case_keys_everywhere(repo):
    (repo / "tensorcost.yaml").write_text(
        CONFIG + "budgets: {quadratic-bytes: 64GiB, intermediate-bytes: 64GiB}\ndefault-dtype: float16\n"
                 "extend-select: [TCL501]\nsequence-dims: [seq]\n")
    assert _located(check(repo, "model").stdout) == ["model/attention.py:6:12 TCL501"]


def test_both_spellings_of_one_key_are_refused(repo):
    (repo / "tensorcost.yaml").write_text(CONFIG + "extend_select: [TCL501]\nextend-select: [TCL501]\n")
    result = check(repo, "model")
    assert result.returncode == 2 and "tensorcost.yaml: extend-select: given twice, as extend_select and extend-select" in result.stderr


def test_a_kebab_typo_is_still_an_unknown_key(repo):
    (repo / "tensorcost.yaml").write_text(CONFIG + "extend-selekt: [TCL501]\n")
    result = check(repo, "model")
    assert result.returncode == 2 and "tensorcost.yaml: extend-selekt: unknown key" in result.stderr


# -- walking -------------------------------------------------------------------------------------

def test_gitignore_is_respected_when_walking_and_named_files_are_still_checked(repo):
    (repo / ".gitignore").write_text("generated/\n*_gen.py\n!keep_gen.py\n")
    for name in ("generated/a.py", "model/b_gen.py", "model/keep_gen.py", "model/deep/c.py", "model/deep/d.py"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(ATTENTION)
    (repo / "model" / "deep" / ".gitignore").write_text("c.py\n")
    walked = check(repo, ".")
    files = sorted({line.split(":")[0] for line in _located(walked.stdout)})
    assert files == ["./model/attention.py", "./model/deep/d.py", "./model/keep_gen.py"]
    assert "checked 3 files" in walked.stdout
    from_below = tensorcost_in(repo / "model", "check", "--no-cache", ".")  # the root's rules apply below it
    assert sorted({line.split(":")[0] for line in _located(from_below.stdout)}) == ["./attention.py", "./deep/d.py", "./keep_gen.py"]
    named = check(repo, "generated/a.py")
    assert _located(named.stdout) == ["generated/a.py:6:12 TCL401", "generated/a.py:6:12 TCL402"]


def test_extend_exclude_in_config_and_on_the_command_line(repo):
    (repo / "vendor").mkdir()
    (repo / "vendor" / "v.py").write_text(ATTENTION)
    (repo / "model" / "big_pb2.py").write_text(ATTENTION)
    (repo / "tensorcost.yaml").write_text(CONFIG + "exclude: ['*_pb2.py']\nextend-exclude: [vendor]\n")
    assert "checked 1 file;" in check(repo, ".").stdout
    (repo / "tensorcost.yaml").write_text(CONFIG)
    assert "checked 3 files;" in check(repo, ".").stdout
    assert "checked 1 file;" in check(repo, "--extend-exclude", "vendor,*_pb2.py", ".").stdout


# -- output --------------------------------------------------------------------------------------

def test_quiet_prints_findings_only(repo):
    result = check(repo, "--quiet", "model")
    assert result.returncode == 1 and len(result.stdout.splitlines()) == 2
    assert check(repo, "-q", "--ignore", "TCL4", "model").stdout == ""


def test_show_source_prints_the_line_and_a_caret_under_the_column(repo):
    (repo / "model" / "attention.py").write_text(ATTENTION.replace("    return q @", "\treturn q @"))
    lines = check(repo, "--show-source", "--select", "TCL401", "model").stdout.splitlines()
    assert lines[0].startswith("model/attention.py:6:9: TCL401 ")
    assert lines[1] == "\treturn q @ k.transpose(-2, -1)"
    assert lines[2] == "\t       ^"
    assert lines[3].startswith("Found 1 finding in 1 file")


def test_a_gitignore_that_is_a_fifo_or_huge_cannot_hang_the_walk(repo):
    import os

    os.mkfifo(repo / ".gitignore")
    assert "checked 1 file;" in check(repo, ".").stdout
    os.unlink(repo / ".gitignore")
    (repo / ".gitignore").write_text("".join(f"pattern{i}/\n" for i in range(50_000)) + "model/\n")
    assert "checked 1 file;" in check(repo, ".").stdout  # patterns past the cap are not read
