"""Config, evidence and plan YAML from strangers: `yaml.safe_load` semantics only (python tags are
refused and nothing runs), alias bombs are refused fast, and every refusal is one readable line.

The same three readers run for `tensorcost check` (tensorcost.yaml and its `evidence:` files),
`tensorcost estimate` (plan files and `--evidence`), flake8 and the language server.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tensorcost_lint.config.errors import ConfigError
from tensorcost_lint.config.plan_files import load_plan
from tensorcost_lint.config.config_discovery import load_config_file
from tensorcost_lint.hardware.evidence_files import load_evidence_file

from tests.run_cli import run_tensorcost

from .cli_runs import assert_one_line_error, clean_env, flake8, tensorcost

ROOT = Path(__file__).resolve().parents[2]
PLAN = (ROOT / "examples" / "plans" / "illustrative_attention_scores.yaml").read_text()
EVIDENCE = """devices:
  - id: lab-gpu
    device: a lab GPU
    source: measured
    measured: 2026-01-01
    owner: perf-eng
    compute:
      - {operation_class: dense-matmul, operand_dtype: float32, accumulation_dtype: float32,
         flop_convention: fma-2, peak_flops_per_second: 1e12}
    bandwidth:
      - {traffic_boundary: hbm-to-compute, sustained_bytes_per_second: 1e11}
"""
# A single refusal must be a line a person reads, not a dump of the document.
MAX_MESSAGE = 1000


def _tags(sentinel: Path) -> dict[str, str]:
    return {
        "object/apply": f"!!python/object/apply:os.system [\"touch {sentinel}\"]",
        "object/new": f"!!python/object/new:subprocess.Popen [[\"touch\", \"{sentinel}\"]]",
        "object": "!!python/object:collections.OrderedDict {}",
        "name": "!!python/name:os.system",
        "module": "!!python/module:os",
        "local-tag": "!shell touch",
    }


def _readers(tmp_path: Path):
    """(kind, write(text) -> path, load(path)) for the three YAML readers."""
    def config(text):
        path = tmp_path / "tensorcost.yaml"
        path.write_text(text)
        return path

    def evidence(text):
        path = tmp_path / "evidence.yaml"
        path.write_text(text)
        return path

    def plan(text):
        path = tmp_path / "plan.yaml"
        path.write_text(text)
        return path

    return {"config": (config, load_config_file), "evidence": (evidence, load_evidence_file),
            "plan": (plan, lambda p: load_plan(p, {}))}


def _with_value(kind: str, value: str) -> str:
    """A valid document of that kind with one scalar replaced by `value`."""
    if kind == "config":
        return f"dims:\n  batch: {value}\n"
    if kind == "evidence":
        return EVIDENCE.replace("owner: perf-eng", f"owner: {value}")
    return PLAN.replace("operation: illustrative-attention-scores", f"operation: {value}")


@pytest.mark.parametrize("kind", ["config", "evidence", "plan"])
@pytest.mark.parametrize("tag", list(_tags(Path("/x"))))
def test_python_tags_are_refused_and_nothing_runs(tmp_path, kind, tag):
    sentinel = tmp_path / "SENTINEL"
    write, load = _readers(tmp_path)[kind]
    path = write(_with_value(kind, _tags(sentinel)[tag]))
    with pytest.raises(ConfigError) as refused:
        load(path)
    assert "could not determine a constructor" in str(refused.value) or "tag" in str(refused.value)
    assert len(str(refused.value)) < MAX_MESSAGE and "\n" not in str(refused.value)
    assert not sentinel.exists()


def _bomb(levels: int, width: int = 2) -> str:
    """A flow sequence whose anchored items each hold `width` aliases of the previous one: the last
    expands to width**levels leaves with levels*width aliases in all. Written inline, so it can
    stand as the value of any one key (readers refuse unknown keys before reading values)."""
    items = ["&l0 [" + ", ".join(["x"] * width) + "]"]
    for i in range(1, levels + 1):
        items.append(f"&l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "[" + ", ".join(items) + "]"


def _bomb_document(kind: str, levels: int, width: int) -> str:
    return _with_value(kind, _bomb(levels, width))


@pytest.mark.parametrize("kind", ["config", "evidence", "plan"])
def test_billion_laughs_is_refused_fast(tmp_path, kind):
    """The classic bomb: 9 levels of 9 aliases (9**9 leaves) — over the alias cap."""
    write, load = _readers(tmp_path)[kind]
    path = write(_bomb_document(kind, 9, 9))
    start = time.process_time()
    with pytest.raises(ConfigError) as refused:
        load(path)
    assert time.process_time() - start < 2
    assert "alias" in str(refused.value) and len(str(refused.value)) < MAX_MESSAGE


@pytest.mark.parametrize("kind", ["config", "evidence", "plan"])
def test_a_bomb_under_the_alias_cap_is_refused_in_one_short_line(tmp_path, kind):
    # 16 doublings use 32 aliases (under MAX_ALIASES=64) and expand to 65,536 leaves; 30 doublings
    # (60 aliases) make `tensorcost check --config` hang in fields.MappingReader's `{value!r}`.
    # Fix belongs in config/safe_yaml.py (bound the expanded size, e.g. count nodes through
    # aliases) and/or a bounded repr (reprlib) in config/fields.py messages.
    write, load = _readers(tmp_path)[kind]
    path = write(_bomb_document(kind, 16, 2))
    start = time.process_time()
    with pytest.raises(ConfigError) as refused:
        load(path)
    assert time.process_time() - start < 2
    assert len(str(refused.value)) < MAX_MESSAGE, len(str(refused.value))


def test_check_with_a_deep_bomb_under_the_cap_exits_2_at_once(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text(_bomb_document("config", 30, 2))
    (tmp_path / "m.py").write_text("import torch\ny = a @ b\n")
    run = tensorcost("check", "m.py", cwd=tmp_path, timeout=8, memory_limit_mib=1024,
                     env=clean_env(TENSORCOST_CACHE_DIR=str(tmp_path / "cache")))
    assert not run.timed_out, "hung"
    assert_one_line_error(run, "tensorcost.yaml")


def test_oversized_yaml_is_refused_before_parsing(tmp_path):
    path = tmp_path / "tensorcost.yaml"
    path.write_text("dims: {batch: 8}\n" + "# padding\n" * 200_000)
    with pytest.raises(ConfigError, match="larger than"):
        load_config_file(path)


@pytest.mark.parametrize("text", [
    "dims: " + "[" * 5000 + "]" * 5000 + "\n",  # deep flow nesting: RecursionError in the composer
    "dims: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n",
    "- " * 3000 + "x\n",
])
def test_deeply_nested_yaml_is_one_line(tmp_path, text):
    path = tmp_path / "tensorcost.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_config_file(path)
    assert len(str(refused.value)) < MAX_MESSAGE


# -- through the command line: exit 2, one line, nothing runs -----------------------------------

def test_check_refuses_a_python_tag_in_the_config(tmp_path):
    sentinel = tmp_path / "SENTINEL"
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text(f"dims: !!python/object/apply:os.system [\"touch {sentinel}\"]\n")
    (tmp_path / "m.py").write_text("import torch\ny = a @ b\n")
    run = run_tensorcost("check", ".", cwd=tmp_path, env={"TENSORCOST_CACHE_DIR": str(tmp_path / "cache")})
    assert_one_line_error(run, "tensorcost.yaml")
    assert not sentinel.exists()


def test_check_refuses_a_python_tag_in_an_evidence_file(tmp_path):
    sentinel = tmp_path / "SENTINEL"
    (tmp_path / ".git").mkdir()
    (tmp_path / "evidence.yaml").write_text(_with_value("evidence", f"!!python/object/apply:os.system [\"touch {sentinel}\"]"))
    (tmp_path / "tensorcost.yaml").write_text("evidence: [evidence.yaml]\nhardware: lab-gpu\n")
    (tmp_path / "m.py").write_text("import torch\ny = a @ b\n")
    run = run_tensorcost("check", ".", cwd=tmp_path, env={"TENSORCOST_CACHE_DIR": str(tmp_path / "cache")})
    assert_one_line_error(run, "evidence.yaml")
    assert not sentinel.exists()


@pytest.mark.parametrize("where", ["plan", "--evidence"])
def test_estimate_refuses_python_tags(tmp_path, where):
    sentinel = tmp_path / "SENTINEL"
    tag = f"!!python/object/apply:os.system [\"touch {sentinel}\"]"
    (tmp_path / "plan.yaml").write_text(_with_value("plan", tag) if where == "plan" else PLAN)
    (tmp_path / "evidence.yaml").write_text(_with_value("evidence", tag))
    args = ["estimate", "plan.yaml"] + (["--evidence", "evidence.yaml"] if where == "--evidence" else [])
    run = run_tensorcost(*args, cwd=tmp_path)
    assert_one_line_error(run, "plan.yaml" if where == "plan" else "evidence.yaml")
    assert not sentinel.exists()


def test_estimate_refuses_a_billion_laughs_plan(tmp_path):
    (tmp_path / "plan.yaml").write_text(_bomb_document("plan", 9, 9))
    run = tensorcost("estimate", "plan.yaml", cwd=tmp_path, timeout=30, memory_limit_mib=1024)
    assert_one_line_error(run, "plan.yaml", "alias")
    assert run.seconds < 10


def test_flake8_reports_a_tagged_config_as_one_finding_and_runs_nothing(tmp_path):
    """flake8 must not crash on a bad tensorcost.yaml: one TCL900 per file naming the file."""
    sentinel = tmp_path / "SENTINEL"
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text(f"dims: !!python/object/apply:os.system [\"touch {sentinel}\"]\n")
    (tmp_path / "m.py").write_text("import torch\ny = a @ b\n")
    run = flake8("--select", "TCL", "m.py", cwd=tmp_path)
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    lines = [line for line in run.stdout.splitlines() if "TCL" in line]
    assert len(lines) == 1 and "TCL900" in lines[0] and "tensorcost.yaml" in lines[0], run.stdout
    assert not sentinel.exists()
