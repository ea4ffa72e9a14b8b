"""The analysed code is never imported, executed or eval'd, through every front end users run: the
`tensorcost` and `flake8` console scripts (run from inside the repository, as people and pre-commit
do), `measure`, `report`, and the language server (open + hover)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .booby_trapped_repo import build, fired
from .cli_runs import clean_env

BIN = Path(sys.executable).parent
pytestmark = pytest.mark.slow


@pytest.fixture
def trapped(tmp_path):
    repo, sentinels = tmp_path / "repo", tmp_path / "sentinels"
    build(repo, sentinels)
    return repo, sentinels


def _console(script: str, *args: str, cwd, timeout: float = 120):
    """The installed console script: sys.path[0] is its bin directory, not the repository."""
    return subprocess.run([str(BIN / script), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=clean_env(TENSORCOST_CACHE_DIR=str(Path(cwd).parent / "cache")))


def test_the_traps_are_live(trapped, tmp_path):
    """Control: running the files (with stand-ins for torch and jaxtyping) does fire the traps, so
    their absence below means the tools did not run them."""
    repo, sentinels = trapped
    stubs = tmp_path / "stubs"
    (stubs / "torch" / "nn").mkdir(parents=True)
    (stubs / "torch" / "__init__.py").write_text("from . import nn\nclass Tensor: pass\n")
    (stubs / "torch" / "nn" / "__init__.py").write_text("class Module: pass\n")
    (stubs / "jaxtyping.py").write_text("class Float:\n    def __class_getitem__(cls, item): return cls\n")
    for name in ("pkg/model.py", "conftest.py", "yaml.py", "pkg/__init__.py"):
        subprocess.run([sys.executable, "-c", f"import runpy; runpy.run_path({str(repo / name)!r})"],
                       cwd=tmp_path, env=clean_env(PYTHONPATH=str(stubs)), check=True, capture_output=True)
    assert {"module_level", "decorator", "default_argument", "class_body", "conftest", "shadow_yaml",
            "package_init"} <= set(fired(sentinels))


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github"])
def test_tensorcost_check(trapped, output_format):
    repo, sentinels = trapped
    result = _console("tensorcost", "check", ".", "--format", output_format, cwd=repo)
    assert result.returncode == 1, result.stderr
    assert "TCL401" in result.stdout  # the model was analysed, statically
    assert fired(sentinels) == []


def test_flake8_plugin(trapped):
    repo, sentinels = trapped
    result = _console("flake8", "--isolated", "--select", "TCL", ".", cwd=repo)
    assert "TCL401" in result.stdout, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert fired(sentinels) == []


def test_flake8_plugin_on_stdin(trapped):
    repo, sentinels = trapped
    source = (repo / "pkg" / "model.py").read_text()
    result = subprocess.run([str(BIN / "flake8"), "--isolated", "--select", "TCL", "--stdin-display-name",
                             "pkg/model.py", "-"], cwd=repo, input=source, capture_output=True, text=True,
                            timeout=120, env=clean_env())
    assert "TCL401" in result.stdout, (result.stdout, result.stderr)
    assert fired(sentinels) == []


def _has_command(name: str) -> bool:
    return importlib.util.find_spec(f"tensorcost_lint.cli.{name}_command") is not None


@pytest.mark.skipif(not _has_command("measure"), reason="tensorcost measure is not there yet")
def test_tensorcost_measure(trapped):
    """`measure` runs synthetic operands shaped like each site, never the site's own code."""
    pytest.importorskip("numpy")
    repo, sentinels = trapped
    result = _console("tensorcost", "measure", "pkg/model.py", "--repeats", "1", "--warmup", "0",
                      "--seconds-per-site", "0.01", "--no-progress", "--format", "json", cwd=repo)
    assert result.returncode in (0, 1), result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    json.loads(result.stdout)
    assert fired(sentinels) == []


@pytest.mark.skipif(not _has_command("report"), reason="tensorcost report is not there yet")
def test_tensorcost_report(trapped, tmp_path):
    repo, sentinels = trapped
    result = _console("tensorcost", "report", ".", cwd=repo)
    assert result.returncode in (0, 1), result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert fired(sentinels) == []


def test_no_file_in_the_repository_was_written(trapped):
    """Linting is read-only on the analysed tree: no __pycache__, no byte-compiled files."""
    repo, _ = trapped
    before = {p: p.stat().st_mtime_ns for p in repo.rglob("*")}
    _console("tensorcost", "check", ".", "--format", "json", cwd=repo)
    after = {p: p.stat().st_mtime_ns for p in repo.rglob("*")}
    created = sorted(str(p.relative_to(repo)) for p in set(after) - set(before))
    assert [p for p in created if not p.startswith(".tensorcost_cache")] == []
    assert {p: t for p, t in after.items() if p in before} == before
    assert not any(p.name == "__pycache__" for p in repo.rglob("*")), os.listdir(repo)
