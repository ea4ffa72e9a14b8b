"""A config whose per-layer overrides are applied by a property setter when the config is built
(fixtures/layer_overrides): config.json's `layer_overrides` field reaches the config as its
constructor gives it — through the setter, which validates it (a mixin's `super().__getattribute__`
in a try / except AttributeError, sets) and assigns the overrides on the config — and
`config.layer_overrides[i]` reads back through the getter: a `Sequence` view (its `__len__`, its
`__getitem__` by index and by kind, iterated) whose items are copies of the config (`copy.copy`,
`__dict__.pop`) with the layer's overrides set on them (`setattr`). Each layer's attention is sized
by its own head width and its rotary table by its kind's (read in a `try` whose body raised
nothing, the kind's settings completed by `setdefault` and a float class attribute), each MLP by
its own width; the totals are held against FlopCounterMode on the model Python builds from the
same fields, inference and training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.layer_overrides import configuration_layered, modeling_layered  # noqa: E402
from tests.whole_model.model_runs import counted_flops  # noqa: E402

FIXTURE = Path(modeling_layered.__file__)
BATCH, STEPS = 2, 8
CASES = {
    "one-wider-layer": {"layer_overrides": {"1": {"head_dim": 24}}},
    "equal-override-dropped": {"num_layers": 4, "layer_overrides": {"0": {"head_dim": 8}, "1": {"head_dim": 16},
                                                                   "3": {"head_dim": 16}}},
    "wider-mlp": {"layer_overrides": {"0": {"intermediate_size": 96}, "2": {"intermediate_size": 24}}},
    "no-overrides": {},
}


def _record(tmp_path, capsys, config, mode: str) -> dict:
    (tmp_path / "config.json").write_text(config.to_json())
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {{B: {BATCH}, T: {STEPS}}}\n")
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", f"{FIXTURE}:LayeredModel.forward",
            "--input", "input_ids=int64 B T", "--dims-from", str(tmp_path / "config.json"), "--mode", mode,
            "--format", "json"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["models"][0]


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_config_json_fields_run_their_property_setters(tmp_path, capsys, case, mode):
    config = configuration_layered.LayeredConfig(**CASES[case])
    torch.manual_seed(0)
    expected = counted_flops(modeling_layered.LayeredModel(config), torch.zeros(BATCH, STEPS, dtype=torch.long),
                             training=mode == "training")
    record = _record(tmp_path, capsys, config, mode)
    assert record["complete"], record["sites"]
    assert record["totals"]["flops"] == expected


def test_each_layer_reads_its_own_override(tmp_path, capsys):
    """Layer 1's projections are 24 wide per head, the others 8 (config.json's `head_dim`): the view's
    item is a copy carrying the override, and the config itself keeps the global value."""
    config = configuration_layered.LayeredConfig(**CASES["one-wider-layer"])
    record = _record(tmp_path, capsys, config, "inference")
    q = {s["module"]: s["flops"] for s in record["sites"] if s["module"].endswith(".q")}
    assert q == {f"layers.{i}.q": 2 * BATCH * STEPS * 32 * 2 * (24 if i == 1 else 8) for i in range(3)}
    assert record["undecided"] == [] and record["not_followed"] == []
