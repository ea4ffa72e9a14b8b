"""`tensorcost check --fix` / `--diff`: every fix a rule carries (the ones the editor offers as
quick fixes), applied atomically and re-linted; `--diff` shows them and changes nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tensorcost_lint.config.config_discovery import load_config_file
from tensorcost_lint.driver.engine import lint_source
from tests.cli.inprocess import tensorcost_in

EINSUM = '''import numpy as np


def chain(a, b, c):
    a = np.zeros((1000, 1000))
    b = np.zeros((1000, 64))
    c = np.zeros((64, 10))
    return np.einsum("ij,jk,kl->il", a, b, c)
'''
MATMUL_CHAIN = '''from jaxtyping import Float
from torch import Tensor


def project(h: Float[Tensor, "tokens d"], w_down: Float[Tensor, "d r"], w_up: Float[Tensor, "r d"],
            probe: Float[Tensor, "d"]):
    y = 2 * (h @ w_down @ w_up @ probe)
    return (h @ w_down) @ w_up @ probe
'''
CONFIG = "dims: {tokens: 4096, d: 4096, r: 64}\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text(CONFIG)
    (tmp_path / "pair.py").write_text(EINSUM)
    (tmp_path / "low_rank.py").write_text(MATMUL_CHAIN)
    return tmp_path


def test_diff_prints_every_fix_and_changes_nothing(repo):
    result = tensorcost_in(repo, "check", "--diff", ".")
    assert result.returncode == 1 and result.stderr == ""
    assert result.stdout == '''--- a/./low_rank.py
+++ b/./low_rank.py
@@ -4,5 +4,5 @@
 
 def project(h: Float[Tensor, "tokens d"], w_down: Float[Tensor, "d r"], w_up: Float[Tensor, "r d"],
             probe: Float[Tensor, "d"]):
-    y = 2 * (h @ w_down @ w_up @ probe)
-    return (h @ w_down) @ w_up @ probe
+    y = 2 * (h @ (w_down @ (w_up @ probe)))
+    return h @ (w_down @ (w_up @ probe))
--- a/./pair.py
+++ b/./pair.py
@@ -5,4 +5,4 @@
     a = np.zeros((1000, 1000))
     b = np.zeros((1000, 64))
     c = np.zeros((64, 10))
-    return np.einsum("ij,jk,kl->il", a, b, c)
+    return np.einsum("ij,jk,kl->il", a, b, c, optimize="optimal")
'''
    assert (repo / "pair.py").read_text() == EINSUM and (repo / "low_rank.py").read_text() == MATMUL_CHAIN


def test_fix_writes_relints_and_reports_what_is_left(repo):
    os.chmod(repo / "pair.py", 0o640)
    result = tensorcost_in(repo, "check", "--fix", ".")
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines() == ["Fixed 3 findings in 2 files",
                                          "All checks passed (checked 2 files; costed 7 of 7 call sites)"]
    assert (repo / "pair.py").read_text() == EINSUM.replace("a, b, c)\n", 'a, b, c, optimize="optimal")\n')
    assert "    return h @ (w_down @ (w_up @ probe))\n" in (repo / "low_rank.py").read_text()
    assert stat.S_IMODE(os.stat(repo / "pair.py").st_mode) == 0o640
    assert sorted(p.name for p in repo.iterdir() if p.suffix == ".tmp") == []
    again = tensorcost_in(repo, "check", "--diff", ".")
    assert (again.returncode, again.stdout) == (0, "")


def test_fix_keeps_crlf_and_a_bom(repo):
    (repo / "pair.py").write_bytes(b"\xef\xbb\xbf" + EINSUM.replace("\n", "\r\n").encode())
    tensorcost_in(repo, "check", "--fix", "pair.py")
    fixed = (repo / "pair.py").read_bytes()
    assert fixed.startswith(b"\xef\xbb\xbf") and fixed.count(b"\r\n") == EINSUM.count("\n")
    assert b'a, b, c, optimize="optimal")\r\n' in fixed


def test_diff_from_stdin(repo):
    result = tensorcost_in(repo, "check", "-", "--stdin-filename", "pair.py", "--diff", stdin=EINSUM)
    assert result.returncode == 1 and result.stdout.startswith("--- a/pair.py\n+++ b/pair.py\n")
    assert '+    return np.einsum("ij,jk,kl->il", a, b, c, optimize="optimal")\n' in result.stdout


def test_the_fix_records_are_the_editor_quick_fixes(repo):
    """One source of truth: the Fix on the finding is what both `--fix` and the LSP code action apply."""
    config = load_config_file(repo / "tensorcost.yaml")
    (finding, *_) = [f for f in lint_source(MATMUL_CHAIN, "low_rank.py", config).findings if f.line == 8]
    assert finding.code == "TCL403"
    assert (finding.fix.line, finding.fix.column, finding.fix.end_line, finding.fix.end_column) == (8, 12, 8, 39)
    assert finding.fix.replacement == "h @ (w_down @ (w_up @ probe))"
    assert finding.fix.description == "write h @ (w_down @ (w_up @ probe))"


def test_a_chain_over_several_lines_gets_no_fix_so_no_comment_is_lost(repo):
    source = MATMUL_CHAIN.replace("    return (h @ w_down) @ w_up @ probe\n",
                                  "    return (h @ w_down  # down\n            @ w_up @ probe)\n")
    (repo / "low_rank.py").write_text(source)
    result = tensorcost_in(repo, "check", "--fix", "low_rank.py")
    assert result.returncode == 1 and result.stdout.startswith("Fixed 1 finding in 1 file\nlow_rank.py:8:13: TCL403 ")
    assert "# down\n" in (repo / "low_rank.py").read_text()
