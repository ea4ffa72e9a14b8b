"""Torch containers changed after they are built (fixtures/styles/grown_containers.py): an
`nn.Sequential` grown by `add_module` runs every module added, and an `nn.ModuleList` grown by
`append` and `extend` holds them too, so the totals equal FlopCounterMode; a change the run does not
follow (`insert`) leaves the list unknown, and the total says it is partial — never a container that
silently lacks what was added."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import grown_containers  # noqa: E402
from tests.whole_model.model_runs import built_record, counted_flops  # noqa: E402

FIXTURE = Path(grown_containers.__file__)
BATCH, SIDE = 2, 16


def _record(tmp_path, capsys, build: str, mode: str) -> dict:
    return built_record(tmp_path, capsys, FIXTURE, build, {"batch": BATCH},
                        {"x": f"float32 batch 3 {SIDE} {SIDE}"}, mode)


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_grown_containers_equal_flop_counter_mode(tmp_path, capsys, mode):
    record = _record(tmp_path, capsys, "build()", mode)
    torch.manual_seed(0)
    expected = counted_flops(grown_containers.build(), torch.randn(BATCH, 3, SIDE, SIDE), training=mode == "training")
    assert record["not_followed"] == [] and record["unresolved_sites"] == 0, record["not_followed"]
    assert record["complete"] is True
    assert record["totals"]["flops"] == expected


def test_a_change_not_followed_leaves_the_total_partial(tmp_path, capsys):
    record = _record(tmp_path, capsys, "build_reordered()", "inference")
    assert record["complete"] is False
