"""The pre-commit hook, installed by pre-commit itself into its own virtualenv.

`pre-commit try-repo` clones a repository at HEAD (plus tracked, uncommitted changes): a file
git does not track yet would be missing from the hook it installs, and the test would check a
mixture of commits. So the test commits a snapshot of the working tree as it is (every file git
tracks or would track) into a throw-away repository and tries *that*: what is tested is what
the rest of the suite runs against, committed or not. The install runs `pip install .` (build
backend and dependencies from the configured package index); where no index is reachable the
test skips, naming pip's error, rather than failing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import MODELS, ROOT

pytestmark = pytest.mark.slow
_UNREACHABLE_INDEX = ("No matching distribution found", "Could not find a version", "NewConnectionError",
                      "Temporary failure in name resolution", "Network is unreachable")


def _git_env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
               PRE_COMMIT_COLOR="never")
    env.pop("TENSORCOST_CACHE_DIR", None)
    return env


def _pre_commit(*args: str, cwd: Path, env: dict):
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def hook_repo(tmp_path) -> Path:
    """A one-commit repository holding the working tree of this checkout."""
    env = _git_env(tmp_path)
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            env=env, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not running from a git checkout: nothing to snapshot for pre-commit")
    snapshot = tmp_path / "tensorcost-checkout"
    for name in filter(None, listed.stdout.split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / name)
    for command in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-q", "-m", "snapshot"]):
        subprocess.run(command, cwd=snapshot, env=env, check=True, capture_output=True)
    return snapshot


@pytest.fixture
def user_repo(tmp_path) -> Path:
    repo = tmp_path / "user-repo"
    repo.mkdir()
    shutil.copy(MODELS / "einsum_chains.py", repo / "low_rank.py")
    shutil.copy(MODELS / "clean_mlp.py", repo / "mlp.py")
    (repo / "README.md").write_text("# a model\n")
    env = _git_env(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "model"], cwd=repo, env=env, check=True)
    return repo


def test_hook_fails_on_findings_in_the_python_files_only(hook_repo, user_repo, tmp_path):
    env = _git_env(tmp_path)
    result = _pre_commit("try-repo", str(hook_repo), "tensorcost", "--all-files", cwd=user_repo, env=env)
    output = result.stdout + result.stderr
    if result.returncode != 1 and any(sign in output for sign in _UNREACHABLE_INDEX):
        pytest.skip(f"pre-commit could not install the hook (no package index): {output[-300:]}")
    assert result.returncode == 1, output
    assert "tensorcost" in output and "Failed" in output
    assert "low_rank.py:11:12: TCL403 costly contraction order" in output
    # `types: [python]`: README.md is never handed over (and with no Python file staged, pre-commit
    # skips the hook without starting it).
    assert "Found 2 findings in 1 file (checked 2 files; costed " in output


def test_cli_with_no_python_files_exits_0_and_says_so(tmp_path, tensorcost):
    """What the hook prints when it is run over a directory without Python files (`always_run`
    hooks, or `tensorcost check` in a script)."""
    (tmp_path / "notes.txt").write_text("no code here\n")
    result = tensorcost("check", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "No Python files to check (checked 0 files)\n"
