"""Long straight-line code (issue 22, defect 2): `check` and `model` of a forward of many
`h = self.lin(h)` lines cost a bounded time and memory per statement (`model` reads the whole
definition, exact), and a warm `check` is served from the cache even when the file's entry is
larger than the flat entry cap.

The per-statement figures are the difference of two sizes, so the interpreter's start-up does not
count; the bounds are about twice and three times what a loaded 2-core machine measures (`check`
~110 µs and ~13 KB a statement, `model` ~170 µs and ~11 KB). Before, `check` was quadratic (a linear
scan per position lookup: ~530 µs a statement at 20,000, 2 ms at 100,000) and `model` read 5,000
lines of a definition (LibCST: ~0.5 ms and ~30 KB a line), the rest listed as not analysed.
The full 100,000-statement sizes are in benchmarks/hostile_models.py."""

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
    assert per_statement_us < 250, (few_cpu, many_cpu)
    assert per_statement_kib < 40, (few.peak_mib, many.peak_mib)


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
    env = clean_env(TENSORCOST_CACHE_DIR=str(tmp_path / "cache"))
    (cold, cold_cpu), (warm, warm_cpu) = (_check(tmp_path, 20_000, env=env) for _ in range(2))
    assert warm.stdout == cold.stdout
    assert warm_cpu < cold_cpu / 2, (cold_cpu, warm_cpu)


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
    assert per_statement_kib < 30, (few.peak_mib, many.peak_mib)
