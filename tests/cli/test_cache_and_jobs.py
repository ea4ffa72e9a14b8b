"""The result cache and `--jobs`: same output as a plain run, safe files, invalidation."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.cli.inprocess import tensorcost_in
from tests.conftest import EXAMPLES, ROOT, run_tensorcost

from tensorcost_lint.driver import file_lint

from tensorcost_lint.driver.cache import ResultCache
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
    from tensorcost_lint.driver.engine import lint_source

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


# A warm cache serves the whole per-file record a fresh run makes: findings with their fixes, every
# site record field in its order, skipped files. So every output is byte for byte the same.
FIXTURES = ROOT / "tests" / "fixtures" / "lint"
REALISTIC = ("nanogpt_style_attention.py", "transformer_lens_style.py", "einsum_orders.py")
OUTPUTS = {
    "json": ("--format", "json"),
    "sarif": ("--format", "sarif"),
    "text-statistics": ("--statistics", "--show-source"),
    "diff": ("--diff",),
}


def _checkout(root: Path) -> Path:
    """examples/ and a few realistic model files, under relative paths that match across copies."""
    shutil.copytree(EXAMPLES, root / "examples")
    (root / "models").mkdir()
    for name in REALISTIC:
        shutil.copy(FIXTURES / name, root / "models" / name)
    return root


def _no_analysis(*_args, **_kwargs):
    raise AssertionError("a warm run analysed a file instead of serving its cache entry")


@pytest.mark.parametrize("output", sorted(OUTPUTS))
def test_warm_cache_output_is_byte_identical_to_a_cold_run(tmp_path: Path, monkeypatch, output: str):
    work = _checkout(tmp_path / "work")
    argv = ("check", "examples", "models", *OUTPUTS[output])
    fresh = tensorcost_in(work, *argv, "--no-cache")
    cold = tensorcost_in(work, *argv, "--cache-dir", str(tmp_path / "cache"))
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 8  # every file that passed the prefilter
    monkeypatch.setattr(file_lint, "lint_source", _no_analysis)
    warm = tensorcost_in(work, *argv, "--cache-dir", str(tmp_path / "cache"))
    assert fresh.returncode == 1 and fresh.stderr == "" and fresh.stdout
    assert (cold.returncode, cold.stdout, cold.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert (warm.returncode, warm.stdout, warm.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    if output == "diff":
        assert "optimize=" in warm.stdout  # the fixes came back with the cached findings


def test_fix_from_a_warm_cache_writes_and_prints_what_a_cold_fix_does(tmp_path: Path, monkeypatch):
    cold_tree, warm_tree = _checkout(tmp_path / "cold"), _checkout(tmp_path / "warm")
    argv = ("check", "examples", "models", "--fix", "--cache-dir", str(tmp_path / "cache"))
    cold = tensorcost_in(cold_tree, *argv)  # fills the cache with the results before fixing
    monkeypatch.setattr(file_lint, "lint_source", _no_analysis)
    warm = tensorcost_in(warm_tree, *argv)
    assert cold.stdout.startswith("Fixed ") and not cold.stdout.startswith("Fixed 0 ")
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    for path in sorted(cold_tree.rglob("*.py")):
        assert (warm_tree / path.relative_to(cold_tree)).read_bytes() == path.read_bytes(), path
    pristine = _checkout(tmp_path / "pristine")
    changed = [p for p in sorted(pristine.rglob("*.py"))
               if (warm_tree / p.relative_to(pristine)).read_bytes() != p.read_bytes()]
    assert changed  # the warm run edited files, from the fixes its cached findings carried
