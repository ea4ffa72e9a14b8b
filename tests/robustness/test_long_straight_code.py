"""Long straight-line code (issue 22, defect 2): `check` and `model` of a forward of many
`h = self.lin(h)` lines cost a bounded time and memory per statement (`model` reads the whole
definition, exact), and a warm `check` is served from the cache even when the file's entry is
larger than the flat entry cap.

The per-statement figures are the difference of two sizes, so the interpreter's start-up does not
count; the bounds are about twice what a loaded 2-core machine measures (`check` ~85 µs and ~4.2 KiB
a statement, `model` ~165 µs and ~9.5 KiB). Before, `check` was quadratic (a linear scan per
position lookup: ~530 µs a statement at 20,000, 2 ms at 100,000), then ~115 µs and ~13 KiB (the
stdlib and LibCST trees held to the end, each JSON record held twice and in millions of pieces);
`model` read 5,000 lines of a definition (LibCST: ~0.5 ms and ~30 KB a line), then ~220 µs and
~12 KiB, then ~200 µs and ~10.6 KiB. A 100,000-statement `check` now takes ~9.5 s and ~460 MB (the stdlib parse alone peaked at
507 MB: analysis/source_parse.py parses such runs in pieces); the sizes are in
benchmarks/hostile_models.py."""

from __future__ import annotations

import json
import resource

from tensorcost_lint.driver import cache as cache_module

from .cli_runs import clean_env, tensorcost
from .in_process import run_main
from .model_programs_hostile import long_forward

MATMUL = 2 * 2 * 64 * 64  # one [B=2, 64] @ [64, 64]



def _check(directory, statements: int, *extra: str, env=None):
    (directory / ".git").mkdir(parents=True, exist_ok=True)
    (directory / "model.py").write_text(long_forward(statements))
    (directory / "tensorcost.yaml").write_text("dims: {B: 2}\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = tensorcost("check", "model.py", "--format", "json", *extra, cwd=directory, timeout=300,
                     env=env or clean_env())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert run.returncode == 0, run.stderr[-2000:]
    return run, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def test_check_of_a_long_forward_costs_a_bounded_time_and_memory_per_statement(tmp_path):
    small, large = 2_000, 20_000
    (few, few_cpu), (many, many_cpu) = (_check(tmp_path / str(n), n, "--no-cache") for n in (small, large))
    sites = json.loads(many.stdout)["sites"]
    assert len(sites) == large and all(s["expression"] == "self.lin(h)" for s in sites)
    assert [s["line"] for s in sites[:2]] == [12, 13] and sites[-1]["line"] == 11 + large
    per_statement_us = (many_cpu - few_cpu) / (large - small) * 1e6
    per_statement_kib = (many.peak_mib - few.peak_mib) * 1024 / (large - small)
    assert per_statement_us < 175, (few_cpu, many_cpu)
    assert per_statement_kib < 9, (few.peak_mib, many.peak_mib)


def test_a_warm_check_is_served_from_an_entry_past_the_flat_cap(tmp_path, monkeypatch):
    """An entry may grow with its file (cache.entry_limit): here the flat cap is made smaller than
    a 300-statement forward's entry, which must still be written, and read back on the next run."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "model.py").write_text(long_forward(300))
    (repo / "tensorcost.yaml").write_text("dims: {B: 2}\n")
    monkeypatch.chdir(repo)
    monkeypatch.setattr(cache_module, "MAX_ENTRY_BYTES", 4096)
    cold = run_main("check", "model.py", "--format", "json")
    (entry,) = [p for p in (repo / ".tensorcost_cache").rglob("*.json") if p.is_file()]
    assert cache_module.MAX_ENTRY_BYTES < entry.stat().st_size <= cache_module.entry_limit(
        (repo / "model.py").read_text())
    served = []
    real_get = cache_module.ResultCache.get
    monkeypatch.setattr(cache_module.ResultCache, "get",
                        lambda self, *a: served.append(real_get(self, *a)) or served[-1])
    warm = run_main("check", "model.py", "--format", "json")
    assert served and served[0] is not None  # the warm run's result came from the entry
    assert cold.returncode == warm.returncode == 0 and warm.stdout == cold.stdout
    assert len(json.loads(warm.stdout)["sites"]) == 300


def test_a_warm_check_of_a_long_forward_is_several_times_faster(tmp_path):
    """Past the start-up both runs pay (the interpreter, imports, the config: a 10-statement file's
    run), the warm run only reads its entry and writes the records: under half the cold run's
    analysis. Whole-process ratios swing with that fixed part (cold 2.5 s, warm 1.2 s at 20,000)."""
    env = clean_env(TENSORCOST_CACHE_DIR=str(tmp_path / "cache"))
    _, start_up = _check(tmp_path / "start-up", 10, "--no-cache", env=env)
    (cold, cold_cpu), (warm, warm_cpu) = (_check(tmp_path, 20_000, env=env) for _ in range(2))
    assert warm.stdout == cold.stdout
    assert warm_cpu - start_up < (cold_cpu - start_up) / 2, (start_up, cold_cpu, warm_cpu)


def _model(directory, statements: int):
    (directory / ".git").mkdir(parents=True, exist_ok=True)
    (directory / "model.py").write_text(long_forward(statements))
    (directory / "tensorcost.yaml").write_text("dims: {B: 2}\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = tensorcost("model", "--entry", "model.py:M.forward", "--input", "x=float32 B 64", "--format", "json",
                     cwd=directory, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert run.returncode == 0, run.stderr[-2000:]
    return run, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def test_model_of_a_long_forward_reads_it_whole_at_a_bounded_cost_per_statement(tmp_path):
    small, large = 2_000, 12_000
    (few, few_cpu), (many, many_cpu) = (_model(tmp_path / str(n), n) for n in (small, large))
    model = json.loads(many.stdout)["models"][0]
    assert model["totals"]["flops"] == long_forward.flops(large, MATMUL)
    assert model["not_followed"] == [] and model["unresolved_sites"] == 0
    assert model["sites"][-1]["line"] == 11 + large
    per_statement_us = (many_cpu - few_cpu) / (large - small) * 1e6
    per_statement_kib = (many.peak_mib - few.peak_mib) * 1024 / (large - small)
    assert per_statement_us < 400, (few_cpu, many_cpu)
    assert per_statement_kib < 22, (few.peak_mib, many.peak_mib)


def test_a_tree_the_host_parsed_is_left_whole():
    """check empties the stdlib tree it parsed itself as it builds its units (a long file never
    holds both trees); a tree a host hands in (flake8's) is read, never changed."""
    import ast

    from tensorcost_lint.analysis.file_analysis import analyse_source
    from tensorcost_lint.config.project_config import ProjectConfig

    text = long_forward(50)
    tree = ast.parse(text)
    before = ast.dump(tree, include_attributes=True)
    given = analyse_source(text, "model.py", ProjectConfig(dims={"B": 2}), tree=tree, front_end="ast")
    own = analyse_source(text, "model.py", ProjectConfig(dims={"B": 2}), front_end="ast")
    assert ast.dump(tree, include_attributes=True) == before
    assert [(s.line, s.column, s.expression) for s in given.sites] == \
        [(s.line, s.column, s.expression) for s in own.sites] and len(own.sites) == 50
