"""`mode: prefill`: `totals.memory.kv_cache` is the bytes of the tensors the model's own cache
object holds when the forward returns (a user-written cache class built from the config, one layer
object per layer), by storage, held against the running model: every tensor reachable from the
returned cache object, one count per storage (its untyped storage's bytes)."""

import json

import pytest

torch = pytest.importorskip("torch")

from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.hfcache.configuration_small import SmallConfig  # noqa: E402
from tests.whole_model.fixtures.hfcache.modeling_small import SmallForCausalLM  # noqa: E402

FIXTURE = "tests/whole_model/fixtures/hfcache/modeling_small.py"
BATCH, STEPS = 2, 8


def held_storage_bytes(cache) -> int:
    """The bytes of every storage a returned cache object reaches through its attributes, lists,
    tuples and dicts (each storage once), as the running model holds them."""
    storages, pending, seen = {}, [cache], set()
    while pending:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, torch.Tensor):
            storage = item.untyped_storage()
            storages[storage.data_ptr()] = storage.nbytes()
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif hasattr(item, "__dict__") and not isinstance(item, torch.nn.Module):
            pending.extend(vars(item).values())
    return sum(storages.values())


def _record(tmp_path, capsys, config: SmallConfig, *more: str) -> dict:
    (tmp_path / "config.json").write_text(config.to_json())
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {{B: {BATCH}, T: {STEPS}}}\ncausal_attention_flops: dense\n")
    entry = f"{(tmp_path.cwd() / FIXTURE).as_posix()}:SmallForCausalLM.forward"
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", entry, "--input",
            "input_ids=int64 B T", "--dims-from", str(tmp_path / "config.json"), "--mode", "prefill",
            "--format", "json", *more]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["models"][0]


@pytest.mark.parametrize(("layers", "width", "heads"), [(2, 16, 2), (3, 24, 3), (4, 32, 4)])
def test_the_kv_cache_of_a_prefill_is_what_the_returned_cache_holds(tmp_path, capsys, layers, width, heads):
    config = SmallConfig(d_model=width, n_layers=layers, n_heads=heads, vocab_size=37, max_positions=64)
    with torch.no_grad():
        out = SmallForCausalLM(config)(torch.zeros(BATCH, STEPS, dtype=torch.long))
    expected = held_storage_bytes(out.past_key_values)
    record = _record(tmp_path, capsys, config)
    memory = record["totals"]["memory"]
    assert record["complete"] and memory["kv_cache"] == expected, memory["unknown"]
    assert "kv_cache" not in memory["unknown"]


def test_no_cache_returned_is_no_figure(tmp_path, capsys):
    """`use_cache: false`: the forward returns no cache object; tensors returned otherwise are not
    claimed as a cache (a legacy tuple of tensors may be one), so the figure is null with why."""
    config = SmallConfig(d_model=16, n_layers=2, n_heads=2, vocab_size=37, max_positions=64, use_cache=False)
    memory = _record(tmp_path, capsys, config)["totals"]["memory"]
    assert memory["kv_cache"] is None and "no cache object" in memory["unknown"]["kv_cache"]


@pytest.mark.parametrize("model_type", ["trocr", "cpmant"])
def test_the_kv_cache_of_transformers_models_is_their_dynamic_cache(tmp_path, model_type):
    """transformers models of the zoo that build their `DynamicCache(config=self.config)` in the
    forward: the prefill's kv_cache is the bytes the returned cache object's tensors hold."""
    transformers = pytest.importorskip("transformers")
    from tests.whole_model import zoo

    config = zoo.tiny_config(model_type)
    torch.manual_seed(0)
    model = getattr(transformers, zoo.model_class_name(model_type))(config).eval()
    with torch.no_grad():
        out = model(input_ids=torch.randint(3, 100, (zoo.BATCH, zoo.SEQ)))
    returned = [value for value in out.values() if value is not None and not isinstance(value, torch.Tensor)
                and hasattr(value, "__dict__")]  # the objects the output holds: its cache
    assert returned
    expected = sum(held_storage_bytes(value) for value in returned)
    path = zoo.write_zoo_config(tmp_path, [model_type])
    lines = [line.replace("--inference:", "--prefill:").replace("mode: inference", "mode: prefill")
             for line in path.read_text().splitlines(keepends=True) if "--training:" not in line]
    path.write_text("".join(lines))
    code, records, stderr = zoo.run_tensorcost(path)
    assert code == 0, stderr
    record = records[f"{model_type}--prefill"]
    assert record["complete"]
    assert record["totals"]["memory"]["kv_cache"] == expected, record["totals"]["memory"]["unknown"]
