"""A size computed with `**` from sizes the config gives (`(image_size // patch_size) ** 2 + 1`
positions): the product Python computes, kept symbolic, so the position table's rows match the
tokens (fixtures/styles/patch_positions.py, held against FlopCounterMode). Before, `d ** 2` of a
size not written as a number was unknown, and so was every layer after the position add."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import patch_positions  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

SIZES = {"B": 2, "image_size": 32, "patch_size": 8, "width": 16}


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_positions_counted_with_a_power_of_config_sizes_equal_flop_counter_mode(tmp_path, capsys, mode):
    record = model_record(tmp_path, capsys, SIZES, f"{patch_positions.__file__}:PatchPositions.forward",
                          {"pixels": "float32 B 3 image_size image_size"}, mode)
    torch.manual_seed(0)
    model = patch_positions.PatchPositions(32, 8, 16)
    expected = counted_flops(model, torch.randn(2, 3, 32, 32), training=mode == "training")
    assert record["complete"] is True, record.get("unresolved_sites")
    assert record["totals"]["flops"] == expected
