"""Long generated forwards through `tensorcost model` (issue 22, defect 2): what the run reports on
them is exact, and the work it does per statement does not grow with the statements before it.

Work is counted, not timed (benchmarks/hostile_models.py has the times): a count that grows with
the square of the statements is the bug a timing test would only catch on a quiet machine."""

from __future__ import annotations

import json

from tensorcost_lint.whole_model.memory.memory_live import LiveNames

from .cli_runs import tensorcost
from .in_process import run_main
from .model_programs_hostile import long_forward, named_forward

MATMUL = 2 * 2 * 64 * 64  # one [B=2, 64] @ [64, 64]
TENSOR = 2 * 64 * 4  # bytes of one [B=2, 64] float32 tensor


def _model(directory, source: str, config: str = "dims: {B: 2}\n") -> dict:
    (directory / ".git").mkdir(parents=True, exist_ok=True)
    (directory / "model.py").write_text(source)
    (directory / "tensorcost.yaml").write_text(config)
    run = run_main("model", "--config", str(directory / "tensorcost.yaml"), "--entry", str(directory / "model.py")
                   + ":M.forward", "--input", "x=float32 B 64", "--format", "json")
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)["models"][0]


def test_a_forward_naming_every_value_is_settled_per_statement_not_per_name(tmp_path, monkeypatch):
    """`h1 = self.lin(h0)`, `h2 = self.lin(h1)`, ...: after each statement only the names it
    writes (and values that can change in place) are read again for what they hold. Reading every
    bound name after every statement was quadratic: 8,000 statements took 32 s."""
    reads = []
    reached = LiveNames._reached
    monkeypatch.setattr(LiveNames, "_reached", lambda self, *a: reads.append(1) or reached(self, *a))
    statements = 3000
    model = _model(tmp_path, named_forward(statements))
    assert model["totals"]["flops"] == named_forward.flops(statements, MATMUL) and model["complete"]
    # every name holds its tensor until the forward returns: the input and the 3,000 results live at once
    assert model["totals"]["memory"]["activations"] == (statements + 1) * TENSOR
    assert len(reads) < 4 * statements  # was statements**2 / 2


def test_a_forward_of_100000_statements_in_a_2_3_mb_file_is_read_whole_and_exact(tmp_path):
    """A whole-model run reads a file as `check` does, up to 64 MiB (it refused one past 1 MiB):
    the 2.3 MB forward is analysed to its last line, with the steps budget raised past its
    statements (the default, 50,000, cuts it there and lists the cut)."""
    (tmp_path / ".git").mkdir()
    source = long_forward(100_000)
    assert len(source.encode()) > 2_300_000
    (tmp_path / "model.py").write_text(source)
    (tmp_path / "tensorcost.yaml").write_text("dims: {B: 2}\nwork_budget: {steps: 200000}\n")
    run = tensorcost("model", "--entry", "model.py:M.forward", "--input", "x=float32 B 64", "--format", "json",
                     cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    model = json.loads(run.stdout)["models"][0]
    assert model["totals"]["flops"] == long_forward.flops(100_000, MATMUL) and model["complete"]
    assert len(model["sites"]) == 100_000 and model["sites"][-1]["line"] == 11 + 100_000
    # the caller's input, the old `h` and the new one live at once, whatever the length
    assert model["totals"]["memory"]["activations"] == 3 * TENSOR
    # issue 22's bound: the stdlib body let go of as it is built, places packed, records slotted,
    # a call run once sharing its summary's rows (622 MiB before)
    assert run.peak_mib < 500, run.peak_mib


def test_a_file_past_the_cap_is_refused_and_so_is_source_past_the_run_total(tmp_path, monkeypatch):
    """Each file a run reads is capped as `check` caps one, and all the source one run reads
    together (a repository of 2,000 files at the cap would be 128 GiB): the entry past the cap is
    a one-line error; a helper past the run's total leaves its call listed, the total partial."""
    from tensorcost_lint.whole_model.source import source_tree

    (tmp_path / "helpers.py").write_text("import torch\n\n\ndef project(x, w):\n    return x @ w\n" + "#\n" * 500)
    source = long_forward(1).replace("        h = x\n", "        project(x, self.lin.weight)\n        h = x\n")
    source = source.replace("from torch import nn\n", "from torch import nn\n\nfrom helpers import project\n")
    monkeypatch.setattr(source_tree, "MAX_RUN_SOURCE_BYTES", len(source.encode()) + 100)
    model = _model(tmp_path, source)
    (cut,) = model["not_followed"]
    assert cut["expression"] == "project(x, self.lin.weight)" and not model["complete"]
    assert f"reading it would take this run past {len(source.encode()) + 100:,} bytes of source" in cut["reason"]
    assert model["totals"]["flops"] == MATMUL  # the forward's own matmul is still costed

    monkeypatch.setattr(source_tree, "MAX_SOURCE_BYTES", len(source.encode()) - 1)
    run = run_main("model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry",
                   str(tmp_path / "model.py") + ":M.forward", "--input", "x=float32 B 64", "--format", "json")
    assert run.returncode == 2 and f"file larger than {len(source.encode()) - 1} bytes" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
