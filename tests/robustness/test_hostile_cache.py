"""Issue 15: a result cache shipped in, or tampered inside, a repository (D1, D4, D7, D11).

Whatever the cache directory holds, a run never writes outside it, never serves an entry made by
another interpreter, for another key or edited by hand, and never leaves temporary files.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tensorcost_lint.driver import cache as cache_module

from .cli_runs import tensorcost
from .in_process import run_main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pair_representation.py"  # a TCL401 and a TCL403, two resolved sites
CONFIG = ROOT / "examples" / "tensorcost.yaml"
MATMUL = "import torch\n\n\ndef f(a, b):\n    return a @ b\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """A cloned repository with one model and its config, as the working directory."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copy(EXAMPLE, repo / "model.py")
    shutil.copy(CONFIG, repo / "tensorcost.yaml")
    monkeypatch.chdir(repo)
    monkeypatch.delenv("TENSORCOST_CACHE_DIR", raising=False)
    return repo


def _entries(cache_dir: Path) -> list[Path]:
    return sorted(p for p in cache_dir.rglob("*.json") if p.is_file())


def _fresh(*argv: str):
    return run_main("check", *argv, "--no-cache")


# D1 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("planted", [
    {"CACHEDIR.TAG": "../../victim/notes.txt"},
    {".gitignore": "../../victim/dropped.txt"},
    {"CACHEDIR.TAG": "../../victim/notes.txt", ".gitignore": "../../victim/dropped.txt"},
])
def test_d1_cache_does_not_write_through_planted_symlinks(repo: Path, planted: dict):
    victim = repo.parent / "victim"
    victim.mkdir()
    (victim / "notes.txt").write_text("my notes\n")
    cache_dir = repo / ".tensorcost_cache"
    cache_dir.mkdir()
    for name, target in planted.items():
        os.symlink(target, cache_dir / name)
    expected = _fresh(".")
    for _ in range(2):
        outcome = run_main("check", ".")
        assert (outcome.returncode, outcome.stdout, outcome.stderr) == (1, expected.stdout, "")
    assert (victim / "notes.txt").read_text() == "my notes\n"
    assert sorted(p.name for p in victim.iterdir()) == ["notes.txt"]  # dropped.txt never created
    assert _entries(cache_dir) == []  # a cache dir with planted links is neither written nor read
    assert all(os.path.islink(cache_dir / name) for name in planted)


def test_d1_cache_directory_that_is_a_symlink_is_not_written(repo: Path):
    elsewhere = repo.parent / "elsewhere"
    elsewhere.mkdir()
    os.symlink("../elsewhere", repo / ".tensorcost_cache")
    outcome = run_main("check", ".")
    assert outcome.returncode == 1 and outcome.stdout == _fresh(".").stdout
    assert list(elsewhere.iterdir()) == []


def test_d1_linked_shard_directory_is_neither_read_nor_written(repo: Path):
    run_main("check", ".")
    [entry] = _entries(repo / ".tensorcost_cache")
    outside = repo.parent / "outside"
    shard = entry.parent
    shutil.move(shard, outside)
    os.symlink(outside, shard)
    for child in outside.iterdir():
        child.unlink()
    outcome = run_main("check", ".")
    assert outcome.returncode == 1 and outcome.stdout == _fresh(".").stdout
    assert list(outside.iterdir()) == []


# D4 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("other", ["python", "libcst"])
def test_d4_entry_from_another_python_or_libcst_is_not_served(repo: Path, monkeypatch, other: str):
    # PEP 695: E999 on Python 3.11, valid on 3.12. A 3.11 run's entry must not answer a 3.12 run.
    (repo / "model.py").write_text("type Pair = tuple[int, int]\n\n" + MATMUL)
    first = run_main("check", "model.py")
    cache_dir = repo / ".tensorcost_cache"
    assert len(_entries(cache_dir)) == 1
    monkeypatch.setattr(cache_module, "_TOOL_FINGERPRINT", [])
    if other == "python":
        monkeypatch.setattr("sys.version", "3.12.7 (main, Oct  1 2024, 08:52:12) [GCC 12.2.0]")
    else:
        import libcst._version

        monkeypatch.setattr(libcst._version, "__version__", "1.1.0")
    second = run_main("check", "model.py")
    assert second.stdout == first.stdout
    assert len(_entries(cache_dir)) == 2  # linted afresh and stored under its own key


# D7 ------------------------------------------------------------------------------------------


def _rewrite(entry: Path, change, *, redigest: bool) -> None:
    """Apply `change` to the entry's result (old format: to the entry) and, when `redigest`,
    recompute the entry's digest so that only the schema checks stand in the way."""
    data = json.loads(entry.read_text())
    if "result" in data:
        change(data["result"])
        if redigest:
            from tensorcost_lint.driver.cache_entries import entry_digest

            data["digest"] = entry_digest(data["key"], data["result"])
    else:
        change(data)
    entry.write_text(json.dumps(data))


def test_d7_entry_edited_to_no_findings_does_not_hide_findings(repo: Path):
    fresh = _fresh("model.py")
    assert fresh.returncode == 1 and "TCL401" in fresh.stdout and "TCL403" in fresh.stdout
    run_main("check", "model.py")
    [entry] = _entries(repo / ".tensorcost_cache")
    _rewrite(entry, lambda result: result.update(findings=[]), redigest=False)
    again = run_main("check", "model.py")
    assert (again.returncode, again.stdout) == (1, fresh.stdout)


def test_d7_entry_copied_to_another_key_is_a_miss(repo: Path):
    (repo / "other.py").write_text(MATMUL)
    run_main("check", "model.py", "other.py")
    entries = _entries(repo / ".tensorcost_cache")
    assert len(entries) == 2
    model_entry = next(e for e in entries if "model.py" in e.read_text())
    other_entry = next(e for e in entries if e != model_entry)
    shutil.copy(model_entry, other_entry)
    again = run_main("check", "other.py", "--format", "json")
    assert json.loads(again.stdout) == json.loads(_fresh("other.py", "--format", "json").stdout)


def _drop_first_finding_key(result):
    del result["findings"][0]["severity"]


def _set_finding(name, value):
    return lambda result: result["findings"][0].__setitem__(name, value)


def _set_site(name, value):
    return lambda result: result["sites"][0].__setitem__(name, value)


def _set_fix(change):
    """Change the fix of the first finding that carries one (the TCL403 `optimize=` edit)."""
    def apply(result):
        finding = next(f for f in result["findings"] if f["fix"] is not None)
        finding["fix"] = change(finding["fix"])
    return apply


MALFORMED = {
    "line-not-int": _set_finding("line", "x"),
    "line-bool": _set_finding("line", True),
    "column-zero": _set_finding("column", 0),
    "unknown-severity": _set_finding("severity", "fatal"),
    "escape-in-code": _set_finding("code", "\x1b[2JTCL401"),
    "message-not-str": _set_finding("message", 5),
    "missing-field": _drop_first_finding_key,
    "other-path": _set_finding("path", "../../etc/passwd"),
    "operands-not-list": _set_site("operands", 5),
    "flops-not-int": _set_site("flops", "many"),
    "shape-of-objects": lambda result: result["sites"][0]["operands"][0].__setitem__("shape", [{"a": 1}]),
    "unknown-site-field": _set_site("injected", 1),
    "skipped-not-bool": lambda result: result.__setitem__("skipped", "no"),
    "findings-not-list": lambda result: result.__setitem__("findings", {"0": 1}),
}


MALFORMED_FIXES = {
    "fix-not-object": _set_fix(lambda fix: 5),
    "fix-missing-field": _set_fix(lambda fix: {k: v for k, v in fix.items() if k != "replacement"}),
    "fix-line-zero": _set_fix(lambda fix: {**fix, "line": 0}),
    "fix-ends-before-it-starts": _set_fix(lambda fix: {**fix, "end_line": fix["line"], "end_column": fix["column"] - 1}),
    "fix-replacement-not-str": _set_fix(lambda fix: {**fix, "replacement": ["import os"]}),
}


@pytest.mark.parametrize("name", sorted(MALFORMED_FIXES))
def test_d7_entry_with_a_malformed_fix_is_a_miss(repo: Path, name: str):
    """A fix is not printed by any format, so the outputs cannot show a bad one: the store must refuse it."""
    from tensorcost_lint.driver.cache import ResultCache
    from tensorcost_lint.config.config_discovery import ConfigResolver

    text, config = (repo / "model.py").read_text(), ConfigResolver().for_path("model.py")
    store = ResultCache(repo / ".tensorcost_cache")
    run_main("check", "model.py")
    served = store.get(text, "model.py", config)
    assert served is not None and [f.fix for f in served.findings if f.fix is not None]
    [entry] = _entries(repo / ".tensorcost_cache")
    _rewrite(entry, MALFORMED_FIXES[name], redigest=True)
    assert store.get(text, "model.py", config) is None


@pytest.mark.parametrize("name", sorted(MALFORMED))
@pytest.mark.parametrize("output_format", ["json", "sarif", "text"])
def test_d7_malformed_entry_is_a_miss_in_every_format(repo: Path, name: str, output_format: str):
    fresh = _fresh("model.py", "--format", output_format)
    run_main("check", "model.py")
    [entry] = _entries(repo / ".tensorcost_cache")
    _rewrite(entry, MALFORMED[name], redigest=True)
    again = run_main("check", "model.py", "--format", output_format)
    assert (again.returncode, again.stdout, again.stderr) == (fresh.returncode, fresh.stdout, "")


def test_d7_escape_sequences_injected_into_an_entry_do_not_reach_the_terminal(repo: Path):
    fresh = _fresh("model.py")
    run_main("check", "model.py")
    [entry] = _entries(repo / ".tensorcost_cache")
    _rewrite(entry, _set_finding("message", "\x1b]0;owned\x07\x1b[2J"), redigest=False)
    again = run_main("check", "model.py")
    assert again.stdout == fresh.stdout and "\x1b" not in again.stdout


def test_d7_a_300_mb_entry_is_not_read(repo: Path):
    run_main("check", "model.py")
    [entry] = _entries(repo / ".tensorcost_cache")
    with open(entry, "r+b") as stream:
        stream.truncate(300 * 10**6)  # sparse: costs no disk
    run = tensorcost("check", "model.py", cwd=repo, timeout=120, memory_limit_mib=1024)
    assert run.returncode == 1 and run.stdout == _fresh("model.py").stdout, run.stderr[-2000:]
    assert run.peak_mib < 250, run.peak_mib  # the entry was read whole before (1.26 GB at 300 MB)


def test_d7_every_fresh_entry_is_served_back(tmp_path: Path):
    """The checks must not refuse what a fresh run writes: every example's entry is a hit."""
    from tensorcost_lint.driver.cache import ResultCache
    from tensorcost_lint.config.config_discovery import ConfigResolver
    from tensorcost_lint.driver.engine import lint_source

    store = ResultCache(tmp_path / "cache")
    resolver = ConfigResolver()
    for path in sorted((ROOT / "examples").glob("*.py")):
        text, config = path.read_text(), resolver.for_path(path)
        fresh = lint_source(text, str(path), config)
        store.put(text, str(path), config, fresh)
        cached = store.get(text, str(path), config)
        assert cached is not None, path
        assert cached.findings == fresh.findings
        assert [f.fix for f in cached.findings] == [f.fix for f in fresh.findings]  # Finding equality skips fix
        assert json.dumps(cached.records()) == json.dumps(fresh.records())  # key order included


# D11 -----------------------------------------------------------------------------------------


def test_d11_failed_cache_write_leaves_no_temporary_file(repo: Path):
    run_main("check", "model.py")
    cache_dir = repo / ".tensorcost_cache"
    [entry] = _entries(cache_dir)
    entry.unlink()
    entry.mkdir()  # the entry's name is taken by a directory: the rename onto it fails
    (entry / "keep").write_text("")
    outcome = run_main("check", "model.py")
    assert outcome.returncode == 1 and outcome.stdout == _fresh("model.py").stdout
    assert [p.name for p in cache_dir.rglob("*") if p.name.endswith(".tmp")] == []
