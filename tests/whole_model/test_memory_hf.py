"""`totals.memory` over the installed Hugging Face transformers source (the five models
test_hf_transformers names): parameters (GPT-2's lm_head tied by `_tied_weights_keys` and the
config's `tie_word_embeddings`) and AdamW's states equal MemTracker's categories for a steady-state
training step on the same tiny configs."""

import json

import pytest
import yaml

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.memory_runs import parameter_bytes, tracked_step  # noqa: E402
from tests.whole_model.test_hf_transformers import BATCH, MODELS, SEQ, SOURCE  # noqa: E402


def _loss(outputs):
    return sum(value.float().sum() for value in outputs.values() if isinstance(value, torch.Tensor))


@pytest.mark.parametrize("name", ["bert", "gpt2", "llama", "mistral", "qwen2"])
def test_parameters_and_adamw_states_equal_mem_trackers(tmp_path, capsys, name):
    path, cls, make_config = MODELS[name]
    make_config().save_pretrained(tmp_path)
    entry = f"{(SOURCE / path).as_posix()}:{cls}.forward"
    (tmp_path / "tensorcost.yaml").write_text(
        f"dims: {{batch: {BATCH}, seq: {SEQ}}}\nsource_roots: ['{SOURCE.as_posix()}']\n"
        f"models:\n  train: {{entry: '{entry}', inputs: {{input_ids: int64 batch seq}}, "
        f"dims_from: config.json, mode: training, optimizer: adamw, "
        f"assume: {{'self.config._attn_implementation': eager}}}}\n")
    assert main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--format", "json"]) == 0
    memory = json.loads(capsys.readouterr().out)["models"][0]["totals"]["memory"]
    config = make_config()
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = getattr(transformers, cls)(config)
    ids = torch.zeros(BATCH, SEQ, dtype=torch.long)
    measured = tracked_step(model, (ids,), torch.optim.AdamW(model.parameters()), _loss)["after"]
    assert memory["parameters"] == measured["_MemRefType.PARAM"] == parameter_bytes(model)
    assert memory["optimizer_states"] == measured["_MemRefType.OPT"]
    assert memory["gradients"] == memory["parameters"]


# dropout at p > 0 keeps a mask that is not modelled yet: the configs switch it off, as a run
# measuring memory without dropout would
NO_DROPOUT = {"gpt2": dict(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0),
              "bert": dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)}


def training_memory(tmp_path, capsys, name: str, optimizer: str | None = None, precision: str = ""):
    """(`totals.memory` of a training run of the named model on its tiny config with dropout off,
    the same model built by transformers: eager attention, seed 0) — what the memory tests compare.
    `precision`: the model's, as a YAML flow mapping (`{parameters: bfloat16, master_weights:
    float32}`), its parameters' dtype then the configuration's `default_dtype` too."""
    path, cls, make_config = MODELS[name]

    def configured():
        config = make_config()
        for key, value in NO_DROPOUT.get(name, {}).items():
            setattr(config, key, value)
        return config

    configured().save_pretrained(tmp_path)
    entry = f"{(SOURCE / path).as_posix()}:{cls}.forward"
    chosen = f"optimizer: {optimizer}, " if optimizer is not None else ""
    settings = ""
    if precision:
        chosen += f"precision: {precision}, "
        settings = f"default_dtype: {yaml.safe_load(precision)['parameters']}\n"
    (tmp_path / "tensorcost.yaml").write_text(
        f"dims: {{batch: {BATCH}, seq: {SEQ}}}\nsource_roots: ['{SOURCE.as_posix()}']\n{settings}"
        f"models:\n  train: {{entry: '{entry}', inputs: {{input_ids: int64 batch seq}}, "
        f"dims_from: config.json, mode: training, {chosen}"
        f"assume: {{'self.config._attn_implementation': eager}}}}\n")
    assert main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--format", "json"]) == 0
    memory = json.loads(capsys.readouterr().out)["models"][0]["totals"]["memory"]
    config = configured()
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    return memory, getattr(transformers, cls)(config)


@pytest.mark.parametrize("name", ["bert", "gpt2", "llama", "mistral", "qwen2"])
def test_activations_equal_autograds_saved_tensors(tmp_path, capsys, name):
    from tests.whole_model.memory_runs import saved_activation_bytes

    memory, model = training_memory(tmp_path, capsys, name)
    model.train()
    loss = _loss(model(input_ids=torch.zeros(BATCH, SEQ, dtype=torch.long)))
    assert memory["activations"] == saved_activation_bytes(loss, model)
