"""Names a module binds only through `from .m import *` of a tree file that imports them
(fixtures/styles/star_reexports): Python's star import copies the binding, so `nn.Conv2d` there is
torch's (the layers were unknown before, and the total partial). Totals are held against
FlopCounterMode."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles.star_reexports import factory  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = factory.__file__
BATCH, SIDE = 2, 16


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_torch_reached_through_a_star_import_equals_flop_counter_mode(tmp_path, capsys, mode):
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{FIXTURE}:Net.forward",
                          {"x": f"float32 B 3 {SIDE} {SIDE}"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(factory.Net(), torch.randn(BATCH, 3, SIDE, SIDE), training=mode == "training")
    assert record["complete"] is True, record.get("unresolved_sites")
    assert record["totals"]["flops"] == expected
