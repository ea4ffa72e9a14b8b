"""Helpers for the front-end tests: a throw-away repository of realistic model files, and flake8
run as users run it (a subprocess)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MODELS = Path(__file__).resolve().parent / "models"
ROOT = Path(__file__).resolve().parents[2]


def clean_env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("TENSORCOST_CACHE_DIR", None)
    env.update(extra)
    return env


def run_flake8(*args: str, cwd, input: str | None = None):
    # --isolated: the developer's own ~/.config/flake8 or a setup.cfg above tmp must not leak in.
    return subprocess.run([sys.executable, "-m", "flake8", *args], cwd=cwd, input=input, capture_output=True,
                          text=True, timeout=120, env=clean_env())


@pytest.fixture
def model_repo(tmp_path) -> Path:
    """A repository root (`.git` bounds config discovery) holding models/ and its tensorcost.yaml."""
    repo = tmp_path / "repo"
    shutil.copytree(MODELS, repo / "models", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / ".git").mkdir()
    return repo


def located(lines: str, prefix: str = "TCL") -> set[tuple[str, int, int, str]]:
    """{(path, line, col, code)} from `path:line:col: CODE message` lines."""
    found = set()
    for line in lines.splitlines():
        parts = line.split(":", 3)
        if len(parts) < 4 or not parts[1].isdigit():
            continue
        code = parts[3].split()[0]
        if code.startswith(prefix):
            found.add((parts[0], int(parts[1]), int(parts[2]), code))
    return found
