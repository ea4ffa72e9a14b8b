"""torch.linalg.solve_triangular in whole models (tests/whole_model/fixtures/styles/
triangular_solves.py): no FLOPs forward; in training the matmul its backward runs for the matrix's
gradient (2·n FLOPs per element of the solution) joins the total, its module and the sites, held
against FlopCounterMode on the same classes."""

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.styles import triangular_solves  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = triangular_solves.__file__
BATCH, STEPS, DIM, HEADS, CHUNK = 2, 8, 8, 2, 4
CASES = {
    # the system from learned projections of the input, solved against the values and the keys
    "chunked-delta-rule": ("ChunkedDeltaSolve", {"dim": DIM, "heads": HEADS, "chunk": CHUNK}),
    # a learned system broadcast over batch and chunks, solved from the left and (left=False) the right
    "learned-system-both-sides": ("LearnedSystemSolve", {"dim": DIM, "heads": HEADS, "chunk": CHUNK}),
    # systems that need no gradient (constants, detached): their solves' backward counts nothing
    "system-without-gradient": ("FixedSystemSolve", {"dim": DIM, "heads": HEADS, "chunk": CHUNK}),
    # a solution the output never reads: no backward runs for it
    "unread-solution": ("UnreadSolve", {"dim": DIM, "chunk": CHUNK}),
}


def _line(code: str) -> int:
    """The fixture's line holding `code`."""
    with open(FIXTURE, encoding="utf-8") as handle:
        return next(number for number, text in enumerate(handle, 1) if code in text)


def _record(tmp_path, capsys, cls, kwargs, mode):
    dims = {"B": BATCH, "T": STEPS, **kwargs}
    return model_record(tmp_path, capsys, dims, f"{FIXTURE}:{cls}.forward", {"x": "float32 B T dim"}, mode)


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_totals_equal_flop_counter_mode(tmp_path, capsys, case, mode):
    cls, kwargs = CASES[case]
    torch.manual_seed(0)
    model = getattr(triangular_solves, cls)(**kwargs)
    expected = counted_flops(model, torch.randn(BATCH, STEPS, DIM), training=mode == "training")
    record = _record(tmp_path, capsys, cls, kwargs, mode)
    assert record["totals"]["flops"] == expected
    assert record["complete"] is True and record["unresolved_sites"] == 0 and record["not_followed"] == []


def test_the_backward_matmul_is_a_site_row_of_its_module_in_training_only(tmp_path, capsys):
    """Each solve whose matrix needs a gradient is one row: backward FLOPs 2·n per element of the
    solution (b·n_chunks·h·c·e elements, n = c), in its module's FLOPs; inference lists no row."""
    cls, kwargs = CASES["chunked-delta-rule"]
    solves = lambda record: [s for s in record["sites"] if s["expression"].startswith("torch.linalg.solve_triangular")]
    assert solves(_record(tmp_path, capsys, cls, kwargs, "inference")) == []
    record = _record(tmp_path, capsys, cls, kwargs, "training")
    per_solve = 2 * BATCH * (STEPS // CHUNK) * HEADS * CHUNK * (DIM // HEADS) * CHUNK
    assert [(s["line"], s["flops"], s["executions"], s["module"]) for s in solves(record)] == [
        (_line("new_values = torch"), per_solve, 1, ""), (_line("decayed = torch.linalg.solve_triangular(system"),
                                                          per_solve, 1, "")]
    root = next(m for m in record["modules"] if m["path"] == "")
    assert root["flops"] == record["totals"]["flops"]


def test_only_the_read_solution_has_a_backward(tmp_path, capsys):
    cls, kwargs = CASES["unread-solution"]
    record = _record(tmp_path, capsys, cls, kwargs, "training")
    rows = [s for s in record["sites"] if s["expression"].startswith("torch.linalg.solve_triangular")]
    assert [s["line"] for s in rows] == [_line("kept = torch")]


def test_a_system_whose_shape_is_lost_keeps_the_solve_not_followed(tmp_path, capsys):
    """An op the run has no shape rule for makes the system shapeless: the backward's matmul cannot
    be costed, so training is partial (never silently short); inference, with nothing to cost, is
    complete."""
    source = tmp_path / "lost.py"
    source.write_text(
        "import torch\nfrom torch import nn\n\n\nclass LostSystem(nn.Module):\n"
        "    def __init__(self, dim):\n        super().__init__()\n        self.key = nn.Linear(dim, dim)\n\n"
        "    def forward(self, x):\n        k = self.key(x)\n"
        "        system = torch.linalg.matrix_exp(k @ k.transpose(1, 2))\n"
        "        return torch.linalg.solve_triangular(system, x, upper=False)\n")
    dims = {"B": BATCH, "T": STEPS, "dim": DIM}
    for mode, complete in (("inference", True), ("training", False)):
        record = model_record(tmp_path, capsys, dims, f"{source}:LostSystem.forward", {"x": "float32 B T dim"}, mode)
        assert record["complete"] is complete
        reasons = [n["reason"] for n in record["not_followed"]]
        assert reasons == ([] if complete else ["the backward of `torch.linalg.solve_triangular` runs a matmul "
                                                "(the operand's gradient) over shapes that are not known"])
