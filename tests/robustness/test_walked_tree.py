"""What `tensorcost check` walks, reads and writes in a tree it did not make.

Decisions (files.py): directories are walked with os.walk(followlinks=False), so a symlinked
directory — a loop, or a link to /etc — is never entered. A symlinked *file* inside the tree is
checked like any file (flake8 does the same; it is the project's own link). Evidence files resolve
relative to the config file that names them, never the working directory. Anything that is not a
regular file (a FIFO, a device, a directory named like a module) must neither hang nor crash the run.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from .cli_runs import assert_one_line_error, clean_env, tensorcost
from .hostile_files import CONFIG, GOOD

pytestmark = pytest.mark.slow


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "tensorcost.yaml").write_text(CONFIG)
    (repo / "good.py").write_text(GOOD)
    return repo


def _check(repo: Path, *args: str, timeout: float = 60, **kwargs):
    return tensorcost("check", *(args or (".",)), "--format", "json", cwd=repo, timeout=timeout,
                      env=clean_env(TENSORCOST_CACHE_DIR=str(repo.parent / "cache")), **kwargs)


def _paths(run) -> dict[str, list[str]]:
    report = json.loads(run.stdout)
    found: dict[str, list[str]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["path"], []).append(finding["code"])
    return found


def test_directory_symlink_loops_do_not_hang(tmp_path):
    repo = _repo(tmp_path)
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "pkg" / "sub" / "up").symlink_to("../..", target_is_directory=True)
    (repo / "pkg" / "self").symlink_to(".", target_is_directory=True)
    (repo / "pkg" / "sub" / "m.py").write_text(GOOD)
    run = _check(repo, timeout=30)
    assert not run.timed_out and run.seconds < 20
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert _paths(run) == {"./good.py": ["TCL401"], "./pkg/sub/m.py": ["TCL401"]}


@pytest.mark.parametrize("links", [{"loop.py": "loop.py"}, {"a.py": "b.py", "b.py": "a.py"}])
def test_file_symlink_loops_are_one_e902(tmp_path, links):
    # files.discover keeps the name (os.path.realpath does not raise); runner.lint_paths then asks
    # ConfigResolver.for_path, whose Path(path).resolve() raises RuntimeError("Symlink loop").
    # Either discover skips what is not a regular file, or for_path resolves the directory only.
    repo = _repo(tmp_path)
    for name, target in links.items():
        (repo / name).symlink_to(target)
    run = _check(repo, timeout=30)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    found = _paths(run)
    assert found.pop("./good.py") == ["TCL401"]
    assert all(codes == ["E902"] for codes in found.values()), found


def test_a_directory_link_out_of_the_tree_is_not_walked(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret_model.py").write_text(GOOD)
    repo = _repo(tmp_path)
    (repo / "etc").symlink_to("/etc", target_is_directory=True)
    (repo / "vendored").symlink_to(outside, target_is_directory=True)
    run = _check(repo)
    report = json.loads(run.stdout)
    assert report["files_checked"] == 1, report["files_checked"]
    assert set(_paths(run)) == {"./good.py"}


def test_a_file_link_in_the_tree_is_checked(tmp_path):
    """The project's own symlinked module is its code: checked, under its link's name and with the
    config that governs the link's directory (as flake8 and ruff discover config from the path)."""
    outside = tmp_path / "shared_code"
    outside.mkdir()
    (outside / "attention.py").write_text(GOOD)
    repo = _repo(tmp_path)
    (repo / "attention.py").symlink_to(outside / "attention.py")
    assert _paths(_check(repo)) == {"./good.py": ["TCL401"], "./attention.py": ["TCL401"]}


def test_a_directory_named_like_a_module_is_walked_not_read(tmp_path):
    repo = _repo(tmp_path)
    (repo / "looks_like.py").mkdir()
    (repo / "looks_like.py" / "inner.py").write_text(GOOD)
    assert _paths(_check(repo)) == {"./good.py": ["TCL401"], "./looks_like.py/inner.py": ["TCL401"]}


def test_a_dangling_link_is_one_e902(tmp_path):
    repo = _repo(tmp_path)
    (repo / "gone.py").symlink_to(tmp_path / "nowhere.py")
    found = _paths(_check(repo))
    assert found.pop("./good.py") == ["TCL401"]
    assert found in ({}, {"./gone.py": ["E902"]}), found


def test_a_fifo_in_the_tree_does_not_hang(tmp_path):
    # files.discover lists every name ending in .py and read_source opens it: a FIFO blocks forever.
    # Fix belongs in files.py: keep only regular files when walking (os.scandir + is_file() on an
    # lstat/stat result, or S_ISREG), and open with O_NONBLOCK / check fstat before reading.
    repo = _repo(tmp_path)
    os.mkfifo(repo / "pipe.py")
    run = _check(repo, timeout=8)
    assert not run.timed_out, "hung on the FIFO"
    assert _paths(run).get("./good.py") == ["TCL401"]


def test_a_link_to_a_device_does_not_exhaust_memory(tmp_path):
    # Git stores symlinks, so a cloned repository can hold `model.py -> /dev/zero`; read_source
    # reads it whole. Skip non-regular files, and cap the bytes read per file (E902 above it).
    repo = _repo(tmp_path)
    (repo / "zero.py").symlink_to("/dev/zero")
    run = _check(repo, timeout=8, memory_limit_mib=512)
    assert not run.timed_out and run.returncode == 1, (run.returncode, run.stderr[-500:])
    assert _paths(run).get("./good.py") == ["TCL401"]


def test_an_unreadable_file_is_one_e902_and_the_run_goes_on(tmp_path):
    repo = _repo(tmp_path)
    secret = repo / "secret.py"
    secret.write_text(GOOD)
    secret.chmod(0)
    try:
        try:
            secret.read_bytes()
        except PermissionError:
            pass
        else:
            pytest.skip("running as root: chmod 000 does not stop reads here")
        found = _paths(_check(repo))
        assert found == {"./good.py": ["TCL401"], "./secret.py": ["E902"]}, found
    finally:
        secret.chmod(0o644)


# -- config and evidence paths -----------------------------------------------------------------

EVIDENCE = """devices:
  - id: lab-gpu
    device: {device}
    source: measured
    measured: 2026-01-01
    owner: perf-eng
    compute:
      - {{operation_class: dense-matmul, operand_dtype: float32, accumulation_dtype: float32,
         flop_convention: fma-2, peak_flops_per_second: {peak}}}
    bandwidth:
      - {{traffic_boundary: hbm-to-compute, sustained_bytes_per_second: 1e11}}
"""


def test_evidence_resolves_relative_to_the_config_file(tmp_path):
    repo = _repo(tmp_path)
    (repo / "configs").mkdir()
    (repo / "configs" / "lab.yaml").write_text(EVIDENCE.format(device="the real one", peak="1e12"))
    (repo / "configs" / "tensorcost.yaml").write_text(CONFIG + "hardware: lab-gpu\nevidence: [lab.yaml]\n")
    # A decoy beside the working directory: must not be the one read.
    (repo / "lab.yaml").write_text(EVIDENCE.format(device="a decoy", peak="1e15"))
    run = _check(repo, "--config", "configs/tensorcost.yaml", "good.py")
    (site,) = json.loads(run.stdout)["sites"]
    assert site["hardware"] == "lab-gpu"
    assert site["lower_bound_seconds"] == pytest.approx(site["flops"] / 1e12, rel=1e-3)
    # From elsewhere, with the config discovered from the file, the same evidence is found.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / "configs" / "model.py").write_text(GOOD)
    run = tensorcost("check", str(repo / "configs" / "model.py"), "--format", "json", cwd=elsewhere,
                     env=clean_env(TENSORCOST_CACHE_DIR=str(tmp_path / "cache")))
    (site,) = json.loads(run.stdout)["sites"]
    assert site["lower_bound_seconds"] == pytest.approx(site["flops"] / 1e12, rel=1e-3)


def test_a_missing_evidence_file_names_the_resolved_path(tmp_path):
    repo = _repo(tmp_path)
    (repo / "configs").mkdir()
    (repo / "configs" / "tensorcost.yaml").write_text(CONFIG + "evidence: [missing.yaml]\n")
    run = _check(repo, "--config", "configs/tensorcost.yaml", "good.py")
    assert_one_line_error(run, "configs/missing.yaml", "not found")


def test_evidence_may_not_be_a_directory(tmp_path):
    repo = _repo(tmp_path)
    (repo / "tensorcost.yaml").write_text(CONFIG + "evidence: [/etc]\n")
    assert_one_line_error(_check(repo, "good.py"), "/etc")


def test_evidence_may_not_be_a_device(tmp_path):
    # safe_yaml.read_text_file does Path.read_bytes() and only then compares with MAX_FILE_BYTES;
    # read at most MAX_FILE_BYTES + 1 bytes (and refuse what is not a regular file) instead.
    repo = _repo(tmp_path)
    (repo / "tensorcost.yaml").write_text(CONFIG + "evidence: [/dev/zero]\n")
    run = _check(repo, "good.py", timeout=20, memory_limit_mib=1024)
    assert not run.timed_out
    assert_one_line_error(run, "/dev/zero")


# -- the result cache ------------------------------------------------------------------------------

HAS_CACHE = importlib.util.find_spec("tensorcost_lint.driver.cache") is not None


def _snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.skipif(not HAS_CACHE, reason="tensorcost_lint/cache.py is not there yet")
def test_the_cache_writes_only_inside_its_directory(tmp_path):
    repo = _repo(tmp_path)
    (repo / "pkg").mkdir()
    (repo / "pkg" / "m.py").write_text(GOOD)
    before = _snapshot(tmp_path)
    for _ in range(2):  # cold, then warm
        run = tensorcost("check", ".", cwd=repo, env=clean_env(TENSORCOST_CACHE_DIR=str(tmp_path / "cache")))
        assert run.returncode == 1, run.stderr
    created = _snapshot(tmp_path) - before
    assert created and all(path.startswith("cache") for path in created), sorted(created)


@pytest.mark.skipif(not HAS_CACHE, reason="tensorcost_lint/cache.py is not there yet")
def test_a_planted_cache_link_does_not_redirect_writes(tmp_path):
    # The default cache directory is `.tensorcost_cache` in the working directory, and git stores
    # symlinks: `.tensorcost_cache -> ../elsewhere` makes `tensorcost check` write .gitignore,
    # CACHEDIR.TAG and entries there. cache.py should refuse a cache directory (or any path below
    # it) that is a symlink (lstat), and create entries with O_NOFOLLOW.
    repo = _repo(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".tensorcost_cache").symlink_to(elsewhere, target_is_directory=True)
    env = clean_env()
    run = tensorcost("check", "good.py", cwd=repo, env=env)
    assert run.returncode == 1, run.stderr
    assert list(elsewhere.iterdir()) == []
