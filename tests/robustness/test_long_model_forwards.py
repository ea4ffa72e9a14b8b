"""Long generated forwards through `tensorcost model` (issue 22, defect 2): what the run reports on
them is exact, and the work it does per statement does not grow with the statements before it.

Work is counted, not timed (benchmarks/hostile_models.py has the times): a count that grows with
the square of the statements is the bug a timing test would only catch on a quiet machine."""

from __future__ import annotations

import json

from tensorcost_lint.whole_model.memory.memory_live import LiveNames

from .in_process import run_main
from .model_programs_hostile import named_forward

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
