"""Issue 15 D2: every number a config gives is bounded, so a hostile value is one line and exit 2
(a TCL900 finding in flake8 and the editor), never a hang or a 100 KB message."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tensorcost_lint.adapters.config_problems import resolve_config
from tensorcost_lint.config.config_discovery import ConfigResolver
from tests.adapters.conftest import run_flake8
from tests.cli.inprocess import tensorcost_in

MODEL = '''from jaxtyping import Float
from torch import Tensor


def scores(q: Float[Tensor, "b s d"], k: Float[Tensor, "b d s"]):
    return q @ k
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.py").write_text(MODEL)
    return tmp_path


def _one_line_exit_2(result, *fragments):
    assert result.returncode == 2, (result.stdout, result.stderr)
    (line,) = result.stderr.strip().splitlines()
    assert len(line) < 300 and "Traceback" not in line
    for fragment in fragments:
        assert fragment in line, line


@pytest.mark.parametrize("budgets, key, reason", [
    ("{contraction_regret: 1e100000000}", "budgets.contraction_regret", "out of range"),
    ("{contraction_regret: 5e12}", "budgets.contraction_regret", "above the maximum"),
    ("{latency_seconds: 1e-100000}", "budgets.latency_seconds", "out of range"),
    ("{latency_seconds: 1e-13}", "budgets.latency_seconds", "below the minimum"),
    ("{latency_seconds: 1e40}", "budgets.latency_seconds", "out of range"),
    ("{latency_seconds: '0.1234567890123456789012345678901234567'}", "budgets.latency_seconds", "too precise"),
])
def test_d2_huge_or_tiny_budget_exits_2_at_once_with_one_line(repo, budgets, key, reason):
    (repo / "tensorcost.yaml").write_text(f"dims: {{b: 2, s: 8, d: 4}}\nbudgets: {budgets}\n")
    started = time.process_time()
    result = tensorcost_in(repo, "check", "--no-cache", "m.py")
    assert time.process_time() - started < 5
    _one_line_exit_2(result, "tensorcost.yaml", key, reason)


def test_d2_evidence_rate_out_of_range_is_refused(repo):
    (repo / "ev.yaml").write_text(
        "devices:\n  - id: mine\n    device: x\n    source: s\n    measured: 2026-01-01\n    owner: me\n"
        "    compute:\n      - {operation_class: dense-matmul, operand_dtype: float32, accumulation_dtype: float32,\n"
        "         flop_convention: fma-2, peak_flops_per_second: 1e99999}\n"
        "    bandwidth:\n      - {traffic_boundary: hbm-to-compute, sustained_bytes_per_second: 1e12}\n")
    (repo / "tensorcost.yaml").write_text("evidence: [ev.yaml]\nhardware: mine\n")
    _one_line_exit_2(tensorcost_in(repo, "check", "--no-cache", "m.py"), "ev.yaml", "peak_flops_per_second", "out of range")


def test_d2_in_range_budgets_still_work(repo):
    (repo / "tensorcost.yaml").write_text(
        "dims: {b: 2, s: 8, d: 4}\nbudgets: {contraction_regret: 1e12, latency_seconds: 1e-12}\n")
    result = tensorcost_in(repo, "check", "--no-cache", "m.py")
    assert result.returncode == 1 and "TCL502" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) < 400


def test_d2_flake8_and_the_editor_get_one_tcl900_not_a_hang(repo):
    (repo / "tensorcost.yaml").write_text("budgets: {contraction_regret: 1e100000000}\n")
    started = time.monotonic()
    result = run_flake8("--isolated", "--select", "TCL", "m.py", cwd=repo)
    assert time.monotonic() - started < 60
    (line,) = result.stdout.splitlines()
    assert line.startswith("m.py:1:1: TCL900 tensorcost config error: ") and "budgets.contraction_regret: out of range" in line
    config, problem = resolve_config(ConfigResolver().for_path, str(repo / "m.py"))  # what the language server runs
    assert config is None and problem.code == "TCL900" and "budgets.contraction_regret" in problem.message
