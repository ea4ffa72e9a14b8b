"""A module moved or cast as it is built (fixtures/styles/module_casts: `.to(dtype=...)`,
`.double()`, `.cpu()`): torch returns the module itself, its floating parameters in the new dtype.
Its forward is followed (the total equals FlopCounterMode on the same module, inference and
training) and the parameters' bytes are those torch holds."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import module_casts  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

ENTRY = f"{Path(module_casts.__file__)}:CastBlock.forward"


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_cast_module_is_the_module(tmp_path, capsys, mode):
    torch.manual_seed(0)
    model = module_casts.CastBlock()
    expected = counted_flops(model, torch.randn(2, 8, 16), training=mode == "training")
    result = model_record(tmp_path, capsys, {"B": 2, "T": 8, "D": 16}, ENTRY, {"x": "float32 B T D"}, mode)
    assert result["complete"] is True and result["totals"]["flops"] == expected
    held = sum(p.numel() * p.element_size() for p in model.parameters())
    assert result["totals"]["memory"]["parameters"] == held
