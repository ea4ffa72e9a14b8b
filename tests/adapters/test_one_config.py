"""One configuration for both front ends: `tensorcost check` reads the `tensorcost-*` settings
flake8 reads from setup.cfg / tox.ini / .flake8, and a relative `tensorcost-config` resolves
against the file that names it, wherever flake8 or the CLI runs from."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.conftest import run_flake8
from tests.cli.inprocess import tensorcost_in

ATTENTION = '''from jaxtyping import Float
from torch import Tensor


def scores(q: Float[Tensor, "batch heads seq d_head"], k: Float[Tensor, "batch heads seq d_head"]):
    return q @ k.transpose(-2, -1)
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """No tensorcost.yaml where discovery looks: the sizes live in conf/dims.yaml, named only by
    flake8's config file."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "dims.yaml").write_text("dims: {batch: 8, heads: 16, d_head: 128}\n")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "attention.py").write_text(ATTENTION)
    return tmp_path


def _codes(stdout: str) -> list[str]:
    return [line.split()[1] for line in stdout.splitlines() if ": TCL" in line]


@pytest.mark.parametrize("name", ["setup.cfg", "tox.ini", ".flake8"])
def test_check_reads_flake8s_tensorcost_settings(repo, name):
    (repo / name).write_text("[flake8]\ntensorcost-config = conf/dims.yaml\ntensorcost-dim = seq=8192\n")
    check = tensorcost_in(repo, "check", "--no-cache", "src")
    assert _codes(check.stdout) == ["TCL401", "TCL402"]
    flake8 = run_flake8("src", cwd=repo)
    assert _codes(flake8.stdout) == ["TCL401", "TCL402"]


def test_a_bare_relative_config_name_resolves_against_the_flake8_file_from_a_subdirectory(repo):
    (repo / "dims.yaml").write_text("dims: {batch: 8, heads: 16, d_head: 128, seq: 8192}\n")
    (repo / "setup.cfg").write_text("[flake8]\ntensorcost-config = dims.yaml\n")
    below = repo / "src" / "pkg"
    flake8 = run_flake8("attention.py", cwd=below)
    assert _codes(flake8.stdout) == ["TCL401", "TCL402"], flake8.stdout + flake8.stderr
    check = tensorcost_in(below, "check", "--no-cache", "attention.py")
    assert _codes(check.stdout) == ["TCL401", "TCL402"]


def test_command_line_flags_beat_the_flake8_settings(repo):
    (repo / "setup.cfg").write_text("[flake8]\ntensorcost-config = conf/dims.yaml\ntensorcost-dim = seq=8192\n"
                                    "tensorcost-hardware = nonexistent-device\n")
    result = tensorcost_in(repo, "check", "--no-cache", "--dim", "seq=2", "--hardware", "h200", "src")
    assert (result.returncode, _codes(result.stdout)) == (0, [])
    (repo / "other.yaml").write_text("dims: {}\n")
    result = tensorcost_in(repo, "check", "--no-cache", "--config", "other.yaml", "--hardware", "h200", "src")
    assert "costed 0 of 1 call site" in result.stdout


def test_bad_flake8_settings_exit_2_naming_the_file(repo):
    (repo / "setup.cfg").write_text("[flake8]\ntensorcost-dim = seq\n")
    result = tensorcost_in(repo, "check", "--no-cache", "src")
    assert result.returncode == 2 and "setup.cfg: [flake8] tensorcost-dim: seq: expected NAME=SIZE" in result.stderr
    (repo / "setup.cfg").write_text("[flake8]\ntensorcost-config = missing.yaml\n")
    result = tensorcost_in(repo, "check", "--no-cache", "src")
    assert result.returncode == 2 and "setup.cfg: [flake8] tensorcost-config: no such file:" in result.stderr


def test_a_file_without_a_flake8_section_is_not_read(repo):
    (repo / "setup.cfg").write_text("[metadata]\nname = x\n[tool:pytest]\ntensorcost-dim = seq\n")
    result = tensorcost_in(repo, "check", "--no-cache", "src")
    assert result.returncode == 0 and "costed 0 of 1 call site" in result.stdout
