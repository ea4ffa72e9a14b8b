"""Module switches a function rebinds with `global` (fixtures/styles/module_globals.py): a layer
factory reads the value the run last assigned, a context manager's `__exit__` restores it after its
block, a helper called under both values is not answered from the memo of the other, and a switch
set to a value the run cannot know leaves what it chooses unknown — a partial total, never one
side's. Totals are held against FlopCounterMode."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import module_globals  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = module_globals.__file__
BATCH, SIDE = 2, 16


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("model", ["Exported", "Scoped"])
def test_a_switch_rebound_by_global_chooses_the_layers_built_after_it(tmp_path, capsys, model, mode):
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{FIXTURE}:{model}.forward",
                          {"x": f"float32 B 3 {SIDE} {SIDE}"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(getattr(module_globals, model)(), torch.randn(BATCH, 3, SIDE, SIDE),
                             training=mode == "training")
    assert record["complete"] is True, record.get("unresolved_sites")
    assert record["totals"]["flops"] == expected


def test_a_switch_set_to_an_unknown_value_leaves_its_layers_unknown(tmp_path, capsys):
    """`set_exportable(exportable)` with the constructor's argument not given: the stem's width
    depends on it, so the total is partial."""
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{FIXTURE}:Unknown.forward",
                          {"x": f"float32 B 3 {SIDE} {SIDE}"})
    assert record["complete"] is False
    assert module_globals._EXPORTABLE is False  # the fixture leaves the switch as it found it
