"""The summary says how many call sites were costed; without sizes, a hint names the missing dims
(a run that costs nothing is no silent pass)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.inprocess import tensorcost_in

# nanoGPT's attention as written: shape comments, no tensorcost config.
NANOGPT = '''import torch
import torch.nn.functional as F


def attend(q, k, v):
    B, nh, T, hs = q.size()
    k = k  # (B, nh, T, hs)
    v = v  # (B, nh, T, hs)
    att = q @ k.transpose(-2, -1)  # (B, nh, T, T)
    y = att @ v  # (B, nh, T, hs)
    return y


def mlp(x, w):
    h = x  # (B, T, C)
    w = w  # (C, F)
    return h @ w
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "model.py").write_text(NANOGPT)
    return tmp_path


def test_all_passed_with_nothing_costed_says_so_and_names_the_missing_dims(repo):
    result = tensorcost_in(repo, "check", "--no-cache", ".")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "All checks passed (checked 1 file; costed 0 of 3 call sites)"
    assert lines[1].startswith("hint: 3 call sites not costed; sizes missing most often: B (3), T (3), hs (2), nh (2), C (1)")
    assert lines[1].endswith("; `tensorcost init` writes a tensorcost.yaml listing the dims your code names")
    assert len(lines) == 2


def test_declared_sizes_cost_every_site_and_the_hint_goes(repo):
    (repo / "tensorcost.yaml").write_text("dims: {B: 1, nh: 2, T: 4, hs: 8, C: 16, F: 32}\n")
    result = tensorcost_in(repo, "check", "--no-cache", ".")
    assert result.stdout == "All checks passed (checked 1 file; costed 3 of 3 call sites)\n"


def test_findings_summary_counts_sites_too_and_quiet_drops_summary_and_hint(repo):
    (repo / "tensorcost.yaml").write_text("dims: {B: 8, nh: 32, T: 8192, hs: 128}\n")
    result = tensorcost_in(repo, "check", "--no-cache", ".")
    lines = result.stdout.splitlines()
    assert lines[-2] == "Found 2 findings in 1 file (checked 1 file; costed 2 of 3 call sites)"
    assert lines[-1].startswith("hint: 1 call site not costed; sizes missing most often: C (1), F (1)")
    quiet = tensorcost_in(repo, "check", "--no-cache", "--quiet", ".")
    assert quiet.returncode == 1 and quiet.stdout.splitlines() == lines[:-2]


def test_cached_results_count_the_same(repo, tmp_path):
    cache = str(tmp_path / "cache")
    first = tensorcost_in(repo, "check", "--cache-dir", cache, ".")
    second = tensorcost_in(repo, "check", "--cache-dir", cache, ".")
    assert first.stdout == second.stdout and "costed 0 of 3 call sites" in second.stdout
