"""Layers built by one comprehension whose `__init__` decides by its own index whether the layer is
wide or narrow (fixtures/styles/layer_schedules): a condition on the index is decided per layer, as
Python builds them, so the total is complete and equals FlopCounterMode — not a choice between an
all-wide and an all-narrow stack. Inference and training."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.styles import layer_schedules  # noqa: E402
from tests.whole_model.model_runs import counted_flops  # noqa: E402

FIXTURE = Path(layer_schedules.__file__)


def _record(tmp_path, capsys, cls: str, mode: str, config: dict) -> dict:
    (tmp_path / "config.json").write_text(json.dumps(config))  # `config.x` reads it (dims_from)
    (tmp_path / "tensorcost.yaml").write_text("dims: {B: 2, T: 8}\n")
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", f"{FIXTURE}:{cls}.forward",
            "--input", "x=float32 B T hidden_size", "--dims-from", str(tmp_path / "config.json"),
            "--mode", mode, "--format", "json"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["models"][0]


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("cls", ["SteppedStack", "FirstDenseStack", "BandedStack"])
@pytest.mark.parametrize("settings", [{}, {"sparse_step": 1, "dense_only_layers": [0, 3], "first_k_dense": 3,
                                           "start_index": 1, "end_index": 1}], ids=["defaults", "other"])
def test_each_layer_decides_by_its_own_index(tmp_path, capsys, cls, mode, settings):
    torch.manual_seed(0)
    config = layer_schedules.ScheduleConfig(**settings)
    model = getattr(layer_schedules, cls)(config)
    expected = counted_flops(model, torch.randn(2, 8, 16), training=mode == "training")
    result = _record(tmp_path, capsys, cls, mode, dataclasses.asdict(config))
    assert result["undecided"] == []
    assert result["complete"] is True and result["totals"]["flops"] == expected


def test_an_index_condition_on_an_unknown_setting_stays_a_choice(tmp_path, capsys):
    """`sparse_step` not given: each layer's side is unknown, so the total is a range, said partial."""
    config = dataclasses.asdict(layer_schedules.ScheduleConfig())
    del config["sparse_step"]
    result = _record(tmp_path, capsys, "SteppedStack", "inference", config)
    assert result["complete"] is False and result["undecided"]
    low, high = result["totals"]["flops_range"]
    assert low < high
