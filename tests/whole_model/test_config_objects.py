"""The config read from `dims_from` is an instance of its config class (found by `model_type`):
its `attribute_map`, properties and methods run from the class chain's source, and a cache built
from it in the forward (`LayeredCache(config=self.config)`: `config.get_text_config(decoder=True)`,
a per-layer property, one cache layer object per layer, `get_seq_length()`, `update(k, v,
self.layer_idx)` on the layer of the running pass) keeps every shape. Held against FlopCounterMode
on the same fixture model (tests/whole_model/fixtures/hfcache), inference and training."""

import json

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.hfcache.configuration_small import SmallConfig  # noqa: E402
from tests.whole_model.fixtures.hfcache.modeling_small import SmallForCausalLM  # noqa: E402
from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.model_runs import counted_flops  # noqa: E402

FIXTURE = "tests/whole_model/fixtures/hfcache/modeling_small.py"
BATCH, STEPS = 2, 8


class _Logits(torch.nn.Module):
    """The fixture model with its logits as the output counted_flops sums."""

    def __init__(self, model) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(ids).logits


def _record(tmp_path, capsys, config: SmallConfig, mode: str) -> dict:
    (tmp_path / "config.json").write_text(config.to_json())
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {{B: {BATCH}, T: {STEPS}}}\ncausal_attention_flops: dense\n")
    entry = f"{(tmp_path.cwd() / FIXTURE).as_posix()}:SmallForCausalLM.forward"
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", entry, "--input",
            "input_ids=int64 B T", "--dims-from", str(tmp_path / "config.json"), "--mode", mode, "--format", "json"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["models"][0]


@pytest.mark.parametrize("layers", [2, 3])
@pytest.mark.parametrize("use_cache", [True, False])
@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_cache_built_from_the_config_object_keeps_every_shape(tmp_path, capsys, layers, use_cache, mode):
    config = SmallConfig(d_model=16, n_layers=layers, n_heads=2, vocab_size=37, max_positions=64, use_cache=use_cache)
    torch.manual_seed(0)
    model = SmallForCausalLM(config)
    ids = torch.zeros(BATCH, STEPS, dtype=torch.long)
    if mode == "inference":
        with torch.no_grad():
            expected = counted_flops(_Logits(model), ids, training=False)
    else:
        expected = counted_flops(_Logits(model), ids, training=True)
    record = _record(tmp_path, capsys, config, mode)
    assert record["complete"], record
    assert record["totals"]["flops"] == expected
    assert record["undecided"] == [] and record["not_followed"] == []


def test_the_config_class_is_found_by_model_type(tmp_path, capsys):
    """`config.hidden_size` through the class's attribute_map and `config.head_dim`, a property of
    the class, size the layers: the attention site reads d_model // n_heads."""
    config = SmallConfig(d_model=24, n_layers=2, n_heads=3, vocab_size=37, max_positions=64)
    record = _record(tmp_path, capsys, config, "inference")
    scores = [s for s in record["sites"] if s["expression"] == "q @ k.transpose(-2, -1)"]
    assert scores and scores[0]["executions"] == 2  # flops over both executions: head_dim 24 // 3 = 8
    assert scores[0]["flops"] == 2 * (2 * BATCH * 3 * STEPS * STEPS * 8)
    assert json.loads(config.to_json())["model_type"] == "small-cached"
