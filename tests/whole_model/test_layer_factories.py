"""Layers picked by Python over classes and strings (fixtures/styles/layer_factories.py): block
strings decoded with `re.split` and `float()`, a norm class looked up in a set of classes (`in`
compares classes by identity, a library class is none of the tree's) or mapped by its lowercased
`__name__`, and a partial's keywords carried over. The totals are held against FlopCounterMode."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import layer_factories  # noqa: E402
from tests.whole_model.model_runs import built_record, counted_flops  # noqa: E402

FIXTURE = Path(layer_factories.__file__)
BATCH, SIDE = 2, 8


def _record(tmp_path, capsys, build: str, mode: str) -> dict:
    return built_record(tmp_path, capsys, FIXTURE, build, {"batch": BATCH},
                        {"x": f"float32 batch 3 {SIDE} {SIDE}"}, mode)


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("build", ["build_plain_norm", "build_named_norm", "build_partial_norm"])
def test_layers_picked_by_class_and_name_equal_flop_counter_mode(tmp_path, capsys, build, mode):
    record = _record(tmp_path, capsys, f"{build}()", mode)
    torch.manual_seed(0)
    model = getattr(layer_factories, build)()
    expected = counted_flops(model, torch.randn(BATCH, 3, SIDE, SIDE), training=mode == "training")
    assert record["complete"] is True, record.get("unresolved_sites")
    assert record["totals"]["flops"] == expected
    assert record["not_followed"] == []
