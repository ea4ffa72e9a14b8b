"""Torch functions called with a Python number first (`torch.pow(10000, t)`, `torch.sub(0, t)`) keep
the tensor's shape, so the tables built with them reach the attention scores: the totals held
against FlopCounterMode."""

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.styles.number_first import SlopedAttention  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

ENTRY = "tests/whole_model/fixtures/styles/number_first.py:SlopedAttention.forward"
BATCH, STEPS, DIM = 2, 8, 32


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_number_first_tables_reach_the_scores(tmp_path, capsys, mode):
    record = model_record(tmp_path, capsys, {"B": BATCH, "T": STEPS}, ENTRY, {"x": f"float32 B T {DIM}"}, mode)
    reference = counted_flops(SlopedAttention(), torch.randn(BATCH, STEPS, DIM), training=mode == "training")
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True
