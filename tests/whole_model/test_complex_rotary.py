"""Rotary embeddings in complex numbers (fixtures/styles/complex_rotary: `torch.polar`,
`torch.view_as_complex`, a complex product, `torch.view_as_real`): the queries and keys keep their
shapes through the complex views, so the attention's matmuls are costed and the total equals
FlopCounterMode on the same module, inference and training."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import complex_rotary  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_rotary_in_complex_numbers_keeps_every_shape(tmp_path, capsys, mode):
    torch.manual_seed(0)
    expected = counted_flops(complex_rotary.ComplexRotaryAttention(), torch.randn(2, 8, 32), training=mode == "training")
    result = model_record(tmp_path, capsys, {"B": 2, "T": 8, "D": 32},
                          f"{Path(complex_rotary.__file__)}:ComplexRotaryAttention.forward", {"x": "float32 B T D"}, mode)
    assert result["complete"] is True and result["totals"]["flops"] == expected
    assert not [s for s in result["sites"] if not s["resolved"]]
