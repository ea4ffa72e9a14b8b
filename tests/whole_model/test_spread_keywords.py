"""A torch function called with `**mapping` (fixtures/styles/spread_keywords.py): a known mapping's
keywords are spliced where they stand, as Python binds them, so `torch.zeros(1, 1, width, **dd)`
keeps its sizes (its shape was unknown before, and every layer after it). Totals are held against
FlopCounterMode."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import spread_keywords  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = spread_keywords.__file__
BATCH, TOKENS, WIDTH = 2, 5, 16


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_tensor_made_with_spread_keywords_keeps_its_sizes(tmp_path, capsys, mode):
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{FIXTURE}:Tokens.forward",
                          {"x": f"float32 B {TOKENS} {WIDTH}"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(spread_keywords.Tokens(), torch.randn(BATCH, TOKENS, WIDTH), training=mode == "training")
    assert record["complete"] is True, record.get("unresolved_sites")
    assert record["totals"]["flops"] == expected
