"""Mixed precision (docs/memory.md, *Mixed precision*): a bfloat16 model whose float32 master
weights torch's foreach AdamW steps, each master's `.grad` cast from its parameter's gradient
before `step()`, the masters copied back after it. `totals.memory` against that protocol run in
plain torch (memory_runs.mixed_precision_step_peak: one untracked warm-up step, then forward,
backward, the casts, `step()`, the copy back and `zero_grad()` under MemTracker on CPU): every
category exact, `peak` within 2% of MemTracker's (less its buffers), in the same phase."""

import json

import pytest

torch = pytest.importorskip("torch")

from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.tinygpt.model import TinyConfig, TinyGPT  # noqa: E402
from tests.whole_model.memory_runs import mixed_precision_step_peak, saved_activation_bytes  # noqa: E402
from tests.whole_model.test_memory_peak import GPT, GPT_SIZES  # noqa: E402

PRECISION = ("--precision", "parameters=bfloat16", "--precision", "master_weights=float32")


def _gpt_memory(tmp_path, capsys, dims) -> dict:
    config = tmp_path / "tensorcost.yaml"
    config.write_text(f"dims: {json.dumps(dims)}\ndefault_dtype: bfloat16\n")  # the model's tensors
    argv = ["model", "--config", str(config), "--entry", f"{(tmp_path.cwd() / GPT).as_posix()}:TinyGPT.forward",
            "--mode", "training", "--optimizer", "adamw", "--format", "json", *PRECISION,
            "--input", "idx=int64 B T", "--input", "targets=int64 B T"]
    for condition in ("self.flash=true", "config.bias=true", "config.dropout=0"):
        argv += ["--assume", condition]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["models"][0]["totals"]["memory"]


def _assert_matches(memory, measured, activations):
    categories = measured["categories"]
    for name in ("parameters", "gradients", "optimizer_states", "master_weights"):
        assert memory[name] == categories[name], name
    # the masters' float32 gradients, one like each master
    assert categories["master_gradients"] == memory["master_weights"]
    assert memory["activations"] == activations
    assert memory["peak_phase"] == measured["phase"]
    assert abs(memory["peak"] - measured["peak"]) <= 0.02 * measured["peak"], (memory["peak"], measured["peak"])
    assert memory["peak"] >= memory["peak_lower_bound"]


@pytest.mark.parametrize("sizes, phase", [("parameters", "optimizer"), ("tied", "optimizer"),
                                          ("vocabulary", "backward"), ("activations", "backward")])
def test_gpt_mixed_precision_step_matches_mem_tracker(tmp_path, capsys, sizes, phase):
    d = GPT_SIZES[sizes]
    torch.manual_seed(0)
    model = TinyGPT(TinyConfig(n_layer=d["n_layer"], n_head=d["n_head"], n_embd=d["n_embd"],
                               vocab_size=d["vocab_size"], block_size=d["block_size"]))
    idx = torch.randint(0, d["vocab_size"], (d["B"], d["T"]))
    targets = torch.randint(0, d["vocab_size"], (d["B"], d["T"]))  # its own storage, as the run counts it
    measured = mixed_precision_step_peak(model, (idx, targets), lambda out: out[1])
    activations = saved_activation_bytes(model(idx, targets)[1], model)
    _assert_matches(_gpt_memory(tmp_path, capsys, d), measured, activations)
    # the masters' gradients and AdamW's square roots on top of every gradient, or the loss's logits
    assert measured["phase"] == phase


def test_the_mixed_precision_peak_states_its_terms(tmp_path, capsys):
    """At the step: the states, both copies of the weights, both gradients and AdamW's square root
    of each float32 exp_avg_sq — nothing else."""
    memory = _gpt_memory(tmp_path, capsys, GPT_SIZES["parameters"])
    masters = memory["master_weights"]
    assert memory["peak_phase"] == "optimizer"
    assert memory["peak"] == (memory["parameters"] + masters + memory["optimizer_states"] + memory["gradients"]
                              + masters + masters)
    assert "peak" not in memory["unknown"]


transformers = pytest.importorskip("transformers")


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_transformers_mixed_precision_step_matches_mem_tracker(tmp_path, capsys, name):
    from tests.whole_model.test_hf_transformers import BATCH, SEQ
    from tests.whole_model.test_memory_hf import _loss, training_memory

    memory, model = training_memory(tmp_path, capsys, name, "adamw", "{parameters: bfloat16, master_weights: float32}")
    ids = torch.zeros(BATCH, SEQ, dtype=torch.long)
    measured = mixed_precision_step_peak(model, (ids,), _loss)
    model.train()
    activations = saved_activation_bytes(_loss(model(ids)), model)
    _assert_matches(memory, measured, activations)
