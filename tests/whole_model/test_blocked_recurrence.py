"""Python's integer semantics and gradient flow on a chunked linear-attention stack
(fixtures/styles/blocked_recurrence.py), held against FlopCounterMode on the same classes:

- `blocks = (T + block - 1) // block` is Python's floor division (one block for T shorter than a
  block), the trip count of `for index in range(blocks)`, whose body reads the index: each block
  in turn, `start = index * block` the int 0 for the first, `min(start + block, T)` the argument
  Python picks (the last block is shorter when T is not a multiple);
- `torch.cat(pieces)` of a list built by `append` in that loop;
- `mixed, state = self.mixer(x)`: `mixed` is not computed from `state`, and the state the stack
  returns in its `RunningState` object is not where the loss comes from, so the state's last
  update has no backward (the reference differentiates the logits only)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import blocked_recurrence  # noqa: E402
from tests.whole_model.model_runs import flop_counter, model_record  # noqa: E402

FIXTURE = Path(blocked_recurrence.__file__)
CASES = {  # T against the block: one block, whole blocks, a shorter last block
    "one-block": {"dim": 16, "heads": 2, "block": 16, "depth": 2, "vocab": 32, "B": 2, "T": 8},
    "whole-blocks": {"dim": 16, "heads": 2, "block": 4, "depth": 2, "vocab": 32, "B": 2, "T": 8},
    "shorter-last-block": {"dim": 16, "heads": 4, "block": 4, "depth": 1, "vocab": 32, "B": 1, "T": 10},
}


def _reference(dims: dict, training: bool) -> int:
    torch.manual_seed(0)
    model = blocked_recurrence.Stack(dims["dim"], dims["heads"], dims["block"], dims["depth"], dims["vocab"])
    model.train(training)
    with flop_counter() as counter:
        logits, _ = model(torch.randn(dims["B"], dims["T"], dims["dim"]))
        if training:
            logits.sum().backward()
    return counter.get_total_flops()


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_totals_equal_flop_counter_mode(tmp_path, capsys, case, mode):
    dims = CASES[case]
    result = model_record(tmp_path, capsys, dims, f"{FIXTURE}:Stack.forward", {"x": "float32 B T dim"}, mode)
    expected = _reference(dims, mode == "training")
    assert result["unresolved_sites"] == 0 and result["undecided"] == [] and result["not_followed"] == []
    assert (result["totals"]["flops"], result["totals"]["flops_range"]) == (expected, [expected, expected])


def test_the_blocks_are_costed_one_by_one(tmp_path, capsys):
    """Three blocks of 4, 4 and 2 tokens: the local scores matmul runs three times, the last one on
    a 2-token block (2·B·H·2·2·hd), never three full blocks."""
    dims = CASES["shorter-last-block"]
    result = model_record(tmp_path, capsys, dims, f"{FIXTURE}:Stack.forward", {"x": "float32 B T dim"})
    local = [site for site in result["sites"] if "k_block.transpose" in site["expression"]
             and site["expression"].startswith("torch.matmul(q_block")]
    hd = dims["dim"] // dims["heads"]
    per_block = {n: 2 * dims["B"] * dims["heads"] * n * n * hd for n in (4, 2)}
    # the two full blocks have one shape: one site run twice; the short block its own
    assert sorted((site["executions"], site["flops"]) for site in local) == [(1, per_block[2]), (2, 2 * per_block[4])]
