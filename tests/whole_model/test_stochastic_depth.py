"""Stochastic depth and a recursive weight init (fixtures/styles/stochastic_depth.py): the keep mask
`x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)` is a (batch, 1, 1) tensor
(`bernoulli_` keeps its receiver's shape; `div_` rescales it in place), so the masked branch keeps
its shape in training; the init's walk over `module.named_children()` runs once per module, as deep
as the tree, over the children the module registered (the run lists no recursion it did not
follow). The totals are held against FlopCounterMode, inference and training."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import stochastic_depth  # noqa: E402
from tests.whole_model.model_runs import built_record, counted_flops  # noqa: E402

FIXTURE = Path(stochastic_depth.__file__)
BATCH, SEQ = 2, 5


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_stochastic_depth_equals_flop_counter_mode(tmp_path, capsys, mode):
    record = built_record(tmp_path, capsys, FIXTURE, "build()", {"batch": BATCH},
                          {"x": f"float32 batch {SEQ} 16"}, mode)
    torch.manual_seed(0)
    model = stochastic_depth.build()
    expected = counted_flops(model, torch.randn(BATCH, SEQ, 16), training=mode == "training")
    assert record["not_followed"] == [] and record["unresolved_sites"] == 0, record["not_followed"]
    assert record["complete"] is True
    assert record["totals"]["flops"] == expected


def test_the_walk_visits_every_registered_module():
    seen = []
    stochastic_depth.walk(lambda module, name: seen.append(name), stochastic_depth.build())
    assert seen[:6] == ["embed", "blocks.0.norm", "blocks.0.fc1", "blocks.0.act", "blocks.0.fc2", "blocks.0.drop_path"]
