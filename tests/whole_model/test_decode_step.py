"""`mode: decode` (Contract 9): one new token against a KV cache of `cache_len` tokens, on the
model's own decode path — the run interprets the model's prefill of `cache_len` tokens, passes the
cache object it returns back into the forward with one token, and costs only that step. Held
against the running model: FlopCounterMode of one decode step after a real prefill, and the bytes
of the cache's tensors after the step (one count per storage)."""

import json

import pytest

torch = pytest.importorskip("torch")

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.styles.decode_cache.configuration_tiny import TinyConfig  # noqa: E402
from tests.whole_model.fixtures.styles.decode_cache.modeling_tiny import TinyForCausalLM  # noqa: E402
from tests.whole_model.test_kv_cache import held_storage_bytes  # noqa: E402

FIXTURE = "tests/whole_model/fixtures/styles/decode_cache/modeling_tiny.py"
BATCH = 2


def decode_step_reference(model, cache_len: int, cache_keyword: str = "cache") -> tuple[int, int]:
    """(FLOPs of one decode step, bytes the cache holds after it): a real prefill of cache_len
    tokens, then one token with the returned cache, as `generate()` runs them."""
    model.eval()
    with torch.no_grad():
        prefill = model(input_ids=torch.randint(3, 30, (BATCH, cache_len)), use_cache=True)
        cache = getattr(prefill, cache_keyword)
        with FlopCounterMode(display=False) as counter:
            model(input_ids=torch.randint(3, 30, (BATCH, 1)), **{cache_keyword: cache})
    return counter.get_total_flops(), held_storage_bytes(cache)


def _decode(tmp_path, capsys, config: TinyConfig, cache_len: int, *more: str, mode: str = "decode") -> dict:
    (tmp_path / "config.json").write_text(json.dumps(config.to_dict()))
    # `seq` is the prompt length of the other modes; decode sets it to cache_len, then to 1
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {{batch: {BATCH}, seq: 5}}\n")
    entry = f"{(tmp_path.cwd() / FIXTURE).as_posix()}:TinyForCausalLM.forward"
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", entry, "--input",
            "input_ids=int64 batch seq", "--dims-from", str(tmp_path / "config.json"), "--mode", mode,
            "--format", "json", *more]
    if mode == "decode":
        argv += ["--cache-len", str(cache_len)]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["models"][0]


@pytest.mark.parametrize(("cache_len", "layers", "kv_heads"), [(8, 2, 2), (31, 3, 4), (64, 2, 1)])
def test_a_decode_step_costs_one_token_against_the_prefilled_cache(tmp_path, capsys, cache_len, layers, kv_heads):
    config = TinyConfig(num_hidden_layers=layers, num_key_value_heads=kv_heads)
    torch.manual_seed(0)
    flops, cache_bytes = decode_step_reference(TinyForCausalLM(config), cache_len)
    record = _decode(tmp_path, capsys, config, cache_len)
    assert record["complete"] and record["mode"] == "decode"
    assert record["totals"]["flops"] == flops
    memory = record["totals"]["memory"]
    assert memory["kv_cache"] == cache_bytes, memory["unknown"]  # cache_len + 1 tokens after the step
    assert "cache_len" in memory["memory_formulas"]["kv_cache"]


def test_layers_run_one_by_one_into_one_shared_cache_object_give_no_figure(tmp_path, capsys):
    """Layers that differ run pass by pass, each updating `cache.layers[i]` of a list the run
    holds as one object standing for n: their states cannot share it, so the cache and what reads
    it are unknown (partial, null with why) — never one layer's keys piled onto another's."""
    config = TinyConfig(intermediate_sizes=[64, 128])
    torch.manual_seed(0)
    flops, _ = decode_step_reference(TinyForCausalLM(config), 8)
    record = _decode(tmp_path, capsys, config, 8)
    assert not record["complete"] and record["totals"]["flops"] < flops
    assert record["totals"]["memory"]["kv_cache"] is None


def test_the_decode_bound_says_it_is_traffic_bound(tmp_path, capsys):
    """One token reads every weight and the whole cache for a few FLOPs each: the lower bound is
    the sites' traffic over the bandwidth, and the JSON and text say so."""
    config = TinyConfig()
    record = _decode(tmp_path, capsys, config, 16)
    totals = record["totals"]
    assert totals["lower_bound_seconds"] > 0
    assert totals["lower_bound_traffic_seconds"] == pytest.approx(totals["lower_bound_seconds"])
    entry = f"{(tmp_path.cwd() / FIXTURE).as_posix()}:TinyForCausalLM.forward"
    assert main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", entry, "--input",
                 "input_ids=int64 batch seq", "--dims-from", str(tmp_path / "config.json"), "--mode", "decode",
                 "--cache-len", "16"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "lower bound: 100.0% of it on sites bound by memory traffic (traffic-bound)" in lines


def test_prefill_fills_the_cache_the_model_builds_with_use_cache_from_its_config(tmp_path, capsys):
    """The cache is built only when `use_cache` (None: the config's, filled in by a decorator) is
    on: a serving run passes the config's value, so a prefill keeps the cache and one whose config
    turns it off keeps none."""
    config = TinyConfig()
    torch.manual_seed(0)
    model = TinyForCausalLM(config).eval()
    with torch.no_grad():
        expected = held_storage_bytes(model(input_ids=torch.zeros(BATCH, 5, dtype=torch.long)).cache)
    record = _decode(tmp_path, capsys, config, 0, mode="prefill")
    assert record["totals"]["memory"]["kv_cache"] == expected
    off = _decode(tmp_path, capsys, TinyConfig(use_cache=False), 0, mode="prefill")
    assert off["totals"]["memory"]["kv_cache"] is None


def test_a_cache_returned_as_past_key_values_goes_back_there(tmp_path, capsys):
    """The parameter the cache goes back into is named by the returned field that holds it
    (`past_key_values` here, `cache` in transformers 5)."""
    from tests.whole_model.fixtures.hfcache.configuration_small import SmallConfig
    from tests.whole_model.fixtures.hfcache.modeling_small import SmallForCausalLM

    config = SmallConfig(d_model=24, n_layers=3, n_heads=3, vocab_size=37, max_positions=64)
    torch.manual_seed(0)
    flops, cache_bytes = decode_step_reference(SmallForCausalLM(config), 12, "past_key_values")
    (tmp_path / "config.json").write_text(config.to_json())
    (tmp_path / "tensorcost.yaml").write_text("dims: {B: 2}\n")
    entry = f"{(tmp_path.cwd() / 'tests/whole_model/fixtures/hfcache/modeling_small.py').as_posix()}:SmallForCausalLM.forward"
    assert main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", entry, "--input",
                 "input_ids=int64 B T", "--dims-from", str(tmp_path / "config.json"), "--mode", "decode",
                 "--cache-len", "12", "--sequence-dim", "T", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)["models"][0]
    assert record["complete"] and record["totals"]["flops"] == flops
    assert record["totals"]["memory"]["kv_cache"] == cache_bytes


@pytest.mark.parametrize(("more", "message"), [
    (["--sequence-dim", "T"], "no input has the sequence dim 'T'"),
    (["--cache-parameter", "past"], "has no parameter 'past'"),
    (["--dim", "cache_len=7"], "dim 'cache_len' = 7 contradicts cache_len 8"),
])
def test_a_decode_entry_the_run_cannot_step_is_a_one_line_error(tmp_path, capsys, more, message):
    config = TinyConfig()
    (tmp_path / "config.json").write_text(json.dumps(config.to_dict()))
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {{batch: {BATCH}}}\n")
    entry = f"{(tmp_path.cwd() / FIXTURE).as_posix()}:TinyForCausalLM.forward"
    assert main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", entry, "--input",
                 "input_ids=int64 batch seq", "--dims-from", str(tmp_path / "config.json"), "--mode", "decode",
                 "--cache-len", "8", *more]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# transformers 5.24 models of the zoo: their DynamicCache (full and sliding-window layers) built by
# their own code; a sliding window shorter than the cache keeps only its last window - 1 tokens
@pytest.mark.parametrize(("model_type", "cache_len", "overrides"), [
    ("llama", 16, {}), ("gpt2", 24, {}), ("mistral", 20, {"sliding_window": 8}),
])
def test_the_decode_step_of_transformers_models_equals_flop_counter_mode(tmp_path, model_type, cache_len, overrides):
    pytest.importorskip("transformers")
    from tests.whole_model import zoo, zoo_decode

    config = zoo.tiny_config(model_type)
    for key, value in overrides.items():
        setattr(config, key, value)
    reference = zoo_decode.decode_reference(model_type, config, cache_len)
    path = zoo_decode.write_decode_config(tmp_path, [model_type], cache_len)
    config.to_json_file(str(tmp_path / model_type / "config.json"))  # with the overrides
    code, records, err = zoo.run_tensorcost(path)
    assert code == 0, err
    record = records[f"{model_type}--decode"]
    assert record["complete"] and record["totals"]["flops"] == reference["flops"]
    assert record["totals"]["memory"]["kv_cache"] == reference["kv_cache"]
