"""Contract 1 selectors: the default-off ledger (TCL501) only when named exactly, and a selector
that matches no code is a usage error with the closest code suggested — in `check`, in the config
file and in flake8's options."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.adapters.conftest import run_flake8
from tests.cli.inprocess import tensorcost_in
from tests.conftest import EXAMPLES


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    """examples/clean_mlp.py with its shipped config: four costed sites and no finding."""
    (tmp_path / ".git").mkdir()
    shutil.copy(EXAMPLES / "clean_mlp.py", tmp_path / "clean_mlp.py")
    shutil.copy(EXAMPLES / "tensorcost.yaml", tmp_path / "tensorcost.yaml")
    return tmp_path


def _codes(stdout: str) -> list[str]:
    return [line.split()[1] for line in stdout.splitlines() if line.startswith("clean_mlp.py:")]


@pytest.mark.parametrize("flag, value", [("--select", "TCL"), ("--select", "TCL5"), ("--extend-select", "TCL"),
                                         ("--extend-select", "TCL50"), ("--select", "ALL")])
def test_a_prefix_never_turns_the_ledger_on(clean, flag, value):
    result = tensorcost_in(clean, "check", "--no-cache", flag, value, "clean_mlp.py")
    assert (result.returncode, result.stdout) == (0, "All checks passed (checked 1 file; costed 4 of 4 call sites)\n")


@pytest.mark.parametrize("flag", ["--select", "--extend-select"])
def test_the_ledger_when_named_exactly(clean, flag):
    result = tensorcost_in(clean, "check", "--no-cache", flag, "tcl501", "clean_mlp.py")
    assert result.returncode == 1 and _codes(result.stdout) == ["TCL501"] * 4


@pytest.mark.parametrize("args, message", [
    (["--select", "TCL999"], "--select: unknown rule code or prefix 'TCL999'; did you mean TCL900?"),
    (["--select", "FOO"], "--select: unknown rule code or prefix 'FOO'; did you mean "),
    (["--select", "TCL4,TCL40x"], "--select: unknown rule code or prefix 'TCL40X'; did you mean TCL404?"),
    (["--extend-select", "TCL51"], "--extend-select: unknown rule code or prefix 'TCL51'; did you mean TCL501?"),
    (["--ignore", "TCL7"], "--ignore: unknown rule code or prefix 'TCL7'"),
    (["--extend-ignore", "TC"], "--extend-ignore: unknown rule code or prefix 'TC'; did you mean TCL?"),
    (["--per-file-ignores", "tests/*:TCL4011"], "--per-file-ignores tests/*:TCL4011: unknown rule code or prefix"),
])
def test_unknown_selectors_exit_2_with_the_closest_code(clean, args, message):
    result = tensorcost_in(clean, "check", "--no-cache", *args, "clean_mlp.py")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"tensorcost: error: {message}" + result.stderr[len(f"tensorcost: error: {message}"):]
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("line, key", [("select: [TCL999]", "select[0]"), ("extend-select: [TCL4, TCL7]", "extend-select[1]"),
                                       ("ignore: [X1]", "ignore[0]"), ("per_file_ignores: {'a/*': [TCL8]}", "per_file_ignores.a/*[0]")])
def test_unknown_selectors_in_the_config_name_file_and_key(clean, line, key):
    (clean / "tensorcost.yaml").write_text("dims: {tokens: 8}\n" + line + "\n")
    result = tensorcost_in(clean, "check", "--no-cache", "clean_mlp.py")
    assert result.returncode == 2
    assert f"tensorcost.yaml: {key}: unknown rule code or prefix" in result.stderr


def test_flake8_select_tcl_on_clean_code_passes(clean):
    result = run_flake8("--isolated", "--select", "TCL", "clean_mlp.py", cwd=clean)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_flake8_config_extend_select_tcl_keeps_the_ledger_off_and_tcl501_turns_it_on(clean):
    def tcl_codes():
        return [line.split()[1] for line in run_flake8("clean_mlp.py", cwd=clean).stdout.splitlines() if " TCL" in line]

    (clean / "setup.cfg").write_text("[flake8]\nextend-select = TCL\n")
    assert tcl_codes() == []
    (clean / "setup.cfg").write_text("[flake8]\nextend-select = TCL501\n")
    assert tcl_codes() == ["TCL501"] * 4


@pytest.mark.parametrize("args", [["--select", "TCL999"], ["--extend-select", "E,TCL55"], ["--extend-ignore", "TCL0X"]])
def test_flake8_unknown_tcl_selector_exits_2_with_one_line(clean, args):
    result = run_flake8("--isolated", *args, "clean_mlp.py", cwd=clean)
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("flake8: tensorcost: --") and "unknown rule code or prefix" in line and "did you mean TCL" in line


def test_flake8_leaves_other_plugins_codes_alone(clean):
    result = run_flake8("--isolated", "--select", "E,W,F,B950,TC002", "clean_mlp.py", cwd=clean)
    assert result.returncode == 1 and result.stderr == "" and " F722 " in result.stdout
