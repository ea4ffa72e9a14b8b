"""An in-place method whose result is dropped still changes what its receiver's name holds
(fixtures/styles/in_place_updates: `out.add_(routed)`, `acc.index_add_(0, rows, y)`): in training,
the backward of what was added in runs, as autograd runs it, so the total equals FlopCounterMode
on the same module — the added branch's backward is neither dropped as unreachable nor missed."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import in_place_updates  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("cls", ["SharedPlusRouted", "RowsAddedIntoBuffer"])
def test_what_is_added_in_place_gets_its_backward(tmp_path, capsys, cls, mode):
    torch.manual_seed(0)
    expected = counted_flops(getattr(in_place_updates, cls)(), torch.randn(2, 8, 16), training=mode == "training")
    result = model_record(tmp_path, capsys, {"B": 2, "T": 8, "D": 16},
                          f"{Path(in_place_updates.__file__)}:{cls}.forward", {"x": "float32 B T D"}, mode)
    assert result["complete"] is True and result["totals"]["flops"] == expected
