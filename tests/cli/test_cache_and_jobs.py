"""The result cache and `--jobs`: same output as a plain run, safe files, invalidation."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import EXAMPLES, run_tensorcost

from tensorcost_lint.cache import ResultCache
from tensorcost_lint.config.project_config import ProjectConfig


def _strip_cache_files(root: Path) -> set:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file()}


def test_cached_and_parallel_runs_match_a_plain_run(tmp_path: Path):
    cache = tmp_path / "cache"
    plain = run_tensorcost("check", str(EXAMPLES), "--format", "json", "--no-cache")
    cold = run_tensorcost("check", str(EXAMPLES), "--format", "json", "--cache-dir", str(cache))
    warm = run_tensorcost("check", str(EXAMPLES), "--format", "json", "--cache-dir", str(cache))
    parallel = run_tensorcost("check", str(EXAMPLES), "--format", "json", "--jobs", "2", "--no-cache")
    warm_parallel = run_tensorcost("check", str(EXAMPLES), "--format", "json", "--jobs", "2", "--cache-dir", str(cache))
    expected = json.loads(plain.stdout)
    for run in (cold, warm, parallel, warm_parallel):
        assert run.returncode == plain.returncode == 1
        assert json.loads(run.stdout) == expected
    stats = run_tensorcost("check", str(EXAMPLES), "--statistics", "--cache-dir", str(cache))
    assert "call sites: 24 resolved / 26 found" in stats.stdout
    files = _strip_cache_files(cache)
    assert Path(".gitignore") in files and Path("CACHEDIR.TAG") in files
    assert all(p.suffix == ".json" for p in files if p.name not in (".gitignore", "CACHEDIR.TAG"))


def test_cache_misses_when_content_or_config_changes(tmp_path: Path):
    cache = ResultCache(tmp_path / "cache")
    config = ProjectConfig(dims={"n": 4})
    from tensorcost_lint.engine import lint_source

    text = "import torch\n\ndef f(a, b):\n    return a @ b\n"
    cache.put(text, "m.py", config, lint_source(text, "m.py", config))
    assert cache.get(text, "m.py", config) is not None
    assert cache.get(text + "\n", "m.py", config) is None
    assert cache.get(text, "m.py", ProjectConfig(dims={"n": 8})) is None
    assert cache.get(text, "other.py", config) is None


def test_a_corrupt_entry_is_recomputed_not_fatal(tmp_path: Path):
    cache_dir = tmp_path / "cache"
    first = run_tensorcost("check", str(EXAMPLES), "--cache-dir", str(cache_dir))
    for entry in cache_dir.rglob("*.json"):
        entry.write_text("{not json")
    second = run_tensorcost("check", str(EXAMPLES), "--cache-dir", str(cache_dir))
    assert second.stdout == first.stdout and second.returncode == 1


def test_read_only_cache_directory_still_lints(tmp_path: Path):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    os.chmod(cache_dir, 0o500)
    try:
        result = run_tensorcost("check", str(EXAMPLES / "clean_mlp.py"), "--cache-dir", str(cache_dir))
        assert result.returncode == 0 and "Traceback" not in result.stderr
    finally:
        os.chmod(cache_dir, 0o700)
