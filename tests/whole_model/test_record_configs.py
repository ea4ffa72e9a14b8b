"""Layers sized from a dataclass config record (fixtures/styles/record_configs.py): a field's literal
default is its value (`depth: int = 2`, `ratio: float = 2.0`), and `dataclasses.replace(cfg,
**kwargs)` is a record with the named fields changed — the parameter is named `cfg`, but it holds
that record, not the dims of its field names. The totals are held against FlopCounterMode."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import record_configs  # noqa: E402
from tests.whole_model.model_runs import built_record, counted_flops  # noqa: E402

FIXTURE = Path(record_configs.__file__)
BATCH = 2
BUILDS = {"default-fields": ("build()", {}), "replaced-fields": ("build('large', depth=1, ratio=1.5)",
                                                                 {"name": "large", "depth": 1, "ratio": 1.5})}


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(BUILDS))
def test_record_configs_equal_flop_counter_mode(tmp_path, capsys, case, mode):
    build, kwargs = BUILDS[case]
    record = built_record(tmp_path, capsys, FIXTURE, build, {"batch": BATCH}, {"x": "float32 batch 3"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(record_configs.build(**kwargs), torch.randn(BATCH, 3), training=mode == "training")
    assert record["complete"] is True, (record["not_followed"], record["unresolved_sites"])
    assert record["totals"]["flops"] == expected
