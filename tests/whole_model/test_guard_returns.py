"""An undecided `if` whose one side returns (a guard clause): the statements after it belong to the
other side only, so `flops_range` is [the returning side, the rest] and `flops` their max — not the
rest counted on both sides. Held against FlopCounterMode on the path torch runs and on the fast
path's own call."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import guard_returns  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402


def test_what_follows_a_guard_return_is_the_other_side(tmp_path, capsys):
    torch.manual_seed(0)
    model, x = guard_returns.Guarded(8), torch.randn(4, 8)
    runs = counted_flops(model, x, training=False)  # the slow path: hasattr is False at run time
    fast = counted_flops(torch.nn.Linear(8, 8, bias=False), x, training=False)
    result = model_record(tmp_path, capsys, {"N": 4, "width": 8}, f"{Path(guard_returns.__file__)}:Guarded.forward",
                          {"x": "float32 N width"})
    assert result["undecided"] == ['hasattr(F, "fused_projection_kernel")']
    assert result["totals"]["flops_range"] == [fast, runs] and result["totals"]["flops"] == runs
