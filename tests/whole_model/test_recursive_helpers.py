"""A recursion on smaller data runs as Python runs it (fixtures/styles/recursive_helpers.py): a
helper calling itself with `times - 1`, one walking nested dicts; a call repeating itself with the
same arguments stays "recursive call: not followed" (tests/whole_model/test_hostile_calls.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import recursive_helpers  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(recursive_helpers.__file__)


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_recursions_on_smaller_data_equal_flop_counter_mode(tmp_path, capsys, mode):
    result = model_record(tmp_path, capsys, {"B": 2, "T": 4}, f"{FIXTURE}:Repeated.forward", {"x": "float32 B T 8"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(recursive_helpers.Repeated(), torch.randn(2, 4, 8), training=mode == "training")
    assert result["complete"] and result["not_followed"] == []
    assert result["totals"]["flops"] == expected
