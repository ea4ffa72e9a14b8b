"""`tensorcost model` over the installed Hugging Face transformers source tree, held against torch's
FlopCounterMode on the same tiny configs (eager attention), inference and training.

The analysis reads the package's files only; this test imports transformers solely to build the
reference model and to find where its source lives."""

import importlib.util
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.test_retained_bytes import saved_storage_bytes  # noqa: E402

BATCH, SEQ = 2, 8
SOURCE = Path(importlib.util.find_spec("transformers").origin).parent
COMMON = dict(vocab_size=101, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
              max_position_embeddings=64)

MODELS = {
    "gpt2": ("models/gpt2/modeling_gpt2.py", "GPT2LMHeadModel",
             lambda: transformers.GPT2Config(vocab_size=101, n_embd=32, n_layer=2, n_head=4, n_positions=64)),
    "gpt2-upcast": ("models/gpt2/modeling_gpt2.py", "GPT2LMHeadModel",
                    lambda: transformers.GPT2Config(vocab_size=101, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                                    reorder_and_upcast_attn=True)),
    "bert": ("models/bert/modeling_bert.py", "BertModel", lambda: transformers.BertConfig(**COMMON)),
    "llama": ("models/llama/modeling_llama.py", "LlamaForCausalLM",
              lambda: transformers.LlamaConfig(num_key_value_heads=2, **COMMON)),
    "mistral": ("models/mistral/modeling_mistral.py", "MistralForCausalLM",
                lambda: transformers.MistralConfig(num_key_value_heads=2, **COMMON)),
    "qwen2": ("models/qwen2/modeling_qwen2.py", "Qwen2ForCausalLM",
              lambda: transformers.Qwen2Config(num_key_value_heads=2, **COMMON)),
}


def _reference(name: str, config) -> tuple[int, int, int]:
    """(inference FLOPs, training FLOPs, training retained bytes): FlopCounterMode's counts of the
    forward, then of the forward and the backward of a loss over every output; and the bytes of the
    distinct non-parameter storages autograd saved for the contractions and attention by the end
    of that forward."""
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = getattr(transformers, MODELS[name][1])(config)
    ids = torch.zeros(BATCH, SEQ, dtype=torch.long)
    model.eval()
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(input_ids=ids)
    inference = counter.get_total_flops()
    model.train()
    with FlopCounterMode(display=False) as counter:
        outputs = model(input_ids=ids)
        loss = sum(value.float().sum() for value in outputs.values() if isinstance(value, torch.Tensor))
        retained = saved_storage_bytes(loss, model)  # before the backward frees what was saved
        loss.backward()
    return inference, counter.get_total_flops(), retained


@pytest.mark.parametrize("name", sorted(MODELS))
def test_totals_equal_flop_counter_mode(tmp_path, capsys, name):
    path, cls, make_config = MODELS[name]
    config = make_config()
    config.save_pretrained(tmp_path)  # config.json: `dims_from`
    entry = f"{(SOURCE / path).as_posix()}:{cls}.forward"
    models = "".join(
        f"  {mode}: {{entry: '{entry}', inputs: {{input_ids: int64 batch seq}}, dims_from: config.json, "
        f"mode: {mode}, assume: {{'self.config._attn_implementation': eager}}}}\n"
        for mode in ("inference", "training"))
    (tmp_path / "tensorcost.yaml").write_text(
        f"dims: {{batch: {BATCH}, seq: {SEQ}}}\ncausal_attention_flops: dense\n"
        f"source_roots: ['{SOURCE.as_posix()}']\nmodels:\n{models}")  # the installed package: read by opt-in
    assert main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--format", "json"]) == 0
    results = {m["name"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    inference, training, retained = _reference(name, make_config())
    assert results["inference"]["totals"]["flops"] == inference
    assert results["inference"]["totals"]["flops_range"] == [inference, inference]
    assert results["training"]["totals"]["flops"] == training
    assert results["training"]["totals"]["forward_flops"] == inference
    assert results["training"]["totals"]["peak_retained_bytes"] == retained
    for result in results.values():
        assert result["unresolved_sites"] == 0
        modeling = [s for s in result["sites"] if s["path"].endswith(path.rsplit("/", 1)[-1])]
        assert modeling and all(s["resolved"] for s in modeling)
    if name == "gpt2-upcast":
        assert any(s["expression"].startswith("torch.baddbmm(") for s in results["inference"]["sites"])


def test_layers_run_once_per_configured_layer(tmp_path, capsys):
    """`for decoder_layer in self.layers[: self.config.num_hidden_layers]` runs each site
    num_hidden_layers times; the registry call resolves to the code's default (eager attention)."""
    path, cls, make_config = MODELS["llama"]
    config = make_config()
    config.num_hidden_layers = 3
    config.save_pretrained(tmp_path)
    entry = f"{(SOURCE / path).as_posix()}:{cls}.forward"
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {{batch: {BATCH}, seq: {SEQ}}}\n")
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", entry, "--input",
            "input_ids=int64 batch seq", "--dims-from", str(tmp_path / "config.json"), "--assume",
            "self.config._attn_implementation=eager", "--format", "json"]
    assert main(argv) == 0
    sites = {(s["module"], s["expression"]): s for s in json.loads(capsys.readouterr().out)["models"][0]["sites"]}
    scores = sites[("model.layers.self_attn", "torch.matmul(query, key_states.transpose(2, 3))")]
    assert scores["executions"] == 3
    assert scores["flops"] == 3 * 2 * BATCH * 4 * SEQ * SEQ * 8  # heads 4, head_dim 8
    assert scores["path"].endswith("models/llama/modeling_llama.py")
    assert scores["line"] == _line_of(SOURCE / path, "attn_weights = torch.matmul(query, key_states.transpose(2, 3))")
    lm_head = sites[("lm_head", "self.lm_head(hidden_states)")]
    assert lm_head["executions"] == 1 and lm_head["flops"] == 2 * BATCH * SEQ * 32 * 101


def _line_of(path: Path, text: str) -> int:
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line)
