"""`totals.memory.activations` and `peak` of an inference pass (Contract 9, memory_live.py): the
largest live set of the forward's tensors under `torch.no_grad()`, exact, held against MemTracker's
peak for one eval-mode forward of the same model (its inputs tracked, its buffers left out);
`peak_phase` is `forward`. Unknown stays unknown, with the reason."""

import json

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.tinygpt.model import TinyConfig, TinyGPT  # noqa: E402
from tests.whole_model.memory_runs import inference_peak  # noqa: E402
from tests.whole_model.model_runs import model_record  # noqa: E402

GPT = "tests/whole_model/fixtures/tinygpt/model.py"
SIZES = {
    # the MLP's GELU: the caller's and the block's residual, the norm's output, up and its GELU
    "mlp": {"n_layer": 4, "n_head": 4, "n_embd": 32, "vocab_size": 101, "block_size": 128, "B": 4, "T": 128},
    # cross entropy's log-softmax beside the logits
    "vocabulary": {"n_layer": 2, "n_head": 2, "n_embd": 16, "vocab_size": 2000, "block_size": 32, "B": 2, "T": 16},
    # attention: scaled_dot_product_attention's log-sum-exp
    "attention": {"n_layer": 1, "n_head": 8, "n_embd": 16, "vocab_size": 50, "block_size": 256, "B": 2, "T": 256},
}


def _gpt_memory(tmp_path, capsys, d, flash: bool, targets: bool, dims=None) -> dict:
    inputs = {"idx": "int64 B T", **({"targets": "int64 B T"} if targets else {})}
    entry = f"{(tmp_path.cwd() / GPT).as_posix()}:TinyGPT.forward"
    record = model_record(tmp_path, capsys, dims or d, entry, inputs, "inference",
                          [f"self.flash={'true' if flash else 'false'}", "config.bias=true", "config.dropout=0"])
    return record["totals"]["memory"]


def _gpt_measured(d, flash: bool, targets: bool) -> dict:
    torch.manual_seed(0)
    model = TinyGPT(TinyConfig(n_layer=d["n_layer"], n_head=d["n_head"], n_embd=d["n_embd"],
                               vocab_size=d["vocab_size"], block_size=d["block_size"]))
    for module in model.modules():
        if hasattr(module, "flash"):
            module.flash = flash
    idx = torch.randint(0, d["vocab_size"], (d["B"], d["T"]))
    inputs = (idx, torch.randint(0, d["vocab_size"], (d["B"], d["T"]))) if targets else (idx,)
    return inference_peak(model, inputs)


@pytest.mark.parametrize("sizes, flash, targets", [("mlp", True, False), ("mlp", False, False), ("mlp", True, True),
                                                   ("vocabulary", True, True), ("vocabulary", False, False),
                                                   ("attention", True, False)])
def test_gpt_inference_peak_equals_mem_trackers(tmp_path, capsys, sizes, flash, targets):
    d = SIZES[sizes]
    memory = _gpt_memory(tmp_path, capsys, d, flash, targets)
    measured = _gpt_measured(d, flash, targets)
    assert (memory["peak"], memory["activations"]) == (measured["peak"], measured["activations"])
    assert memory["peak"] == memory["parameters"] + memory["activations"]
    assert memory["peak_phase"] == "forward"
    assert "peak" not in memory["unknown"] and "activations" not in memory["unknown"]


def test_gpt_inference_figures_at_nanogpt_sizes_by_hand(tmp_path, capsys):
    """At the MLP of the last block (B=4, T=128, C=32, float32, one hidden state 65,536 B): the
    caller's `x` and the block's (its residual sum), the norm's output, `up`'s output and GELU's
    (4C each), the positions' int64 arange (1,024 B) and the int64 input (4,096 B)."""
    memory = _gpt_memory(tmp_path, capsys, SIZES["mlp"], True, False)
    hidden = 4 * 128 * 32 * 4
    assert memory["activations"] == 3 * hidden + 2 * 4 * hidden + 1024 + 4096 == 726016


def test_an_unknown_size_leaves_the_inference_peak_unknown_with_the_reason(tmp_path, capsys):
    d = dict(SIZES["mlp"])
    del d["T"]  # the sequence length is not bound
    memory = _gpt_memory(tmp_path, capsys, d, True, False, dims=d)
    assert memory["activations"] is None and memory["peak"] is None and memory["peak_phase"] is None
    assert "of unknown size" in memory["unknown"]["activations"]
    assert "the activations are not known" in memory["unknown"]["peak"]


transformers = pytest.importorskip("transformers")
# transformers' packed-sequence detection reads the position ids' values (`(mask[:, -1] == 0).all()`):
# a branch the run cannot decide, and on which what lives depends; a batch of one sequence each
PACKED = "packed_sequence_mask is not None"


def _hf_memory(tmp_path, capsys, name: str, batch: int, seq: int, assume_packed: bool = True):
    from tests.whole_model.test_hf_transformers import MODELS, SOURCE

    path, cls, make_config = MODELS[name]
    make_config().save_pretrained(tmp_path)
    entry = f"{(SOURCE / path).as_posix()}:{cls}.forward"
    packed = f", '{PACKED}': false" if assume_packed else ""
    (tmp_path / "tensorcost.yaml").write_text(
        f"dims: {{batch: {batch}, seq: {seq}}}\nsource_roots: ['{SOURCE.as_posix()}']\n"
        f"models:\n  infer: {{entry: '{entry}', inputs: {{input_ids: int64 batch seq}}, dims_from: config.json, "
        f"mode: inference, assume: {{'self.config._attn_implementation': eager{packed}}}}}\n")
    from tensorcost_lint.cli.main import main

    assert main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--format", "json"]) == 0
    memory = json.loads(capsys.readouterr().out)["models"][0]["totals"]["memory"]
    config = make_config()
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    return memory, getattr(transformers, cls)(config)


@pytest.mark.parametrize("name, batch, seq", [("gpt2", 2, 32), ("gpt2", 1, 8), ("llama", 2, 32), ("llama", 1, 8),
                                              ("mistral", 2, 32), ("qwen2", 2, 32), ("bert", 2, 32)])
def test_transformers_inference_peak_equals_mem_trackers(tmp_path, capsys, name, batch, seq):
    memory, model = _hf_memory(tmp_path, capsys, name, batch, seq)
    ids = torch.zeros(batch, seq, dtype=torch.long)
    measured = inference_peak(model, (ids,), **({} if name == "bert" else {"use_cache": False}))
    assert (memory["peak"], memory["activations"]) == (measured["peak"], measured["activations"])
    assert memory["peak_phase"] == "forward"


def test_an_undecided_branch_that_decides_what_lives_leaves_it_unknown(tmp_path, capsys):
    memory, _ = _hf_memory(tmp_path, capsys, "llama", 2, 8, assume_packed=False)
    assert memory["activations"] is None and memory["peak"] is None
    assert f"an undecided branch ({PACKED}) decides which tensors live" in memory["unknown"]["activations"]
    assert memory["parameters"] is not None


def test_shape_comments_restate_the_value_they_bind(tmp_path, capsys):
    """examples/gpt_block.py's attention binds `k = k.view(...).transpose(1, 2)  # (B, nh, T, hs)`:
    the names hold the views of the fused projection, one storage, as torch does."""
    import sys
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    sys.path.insert(0, str(examples))
    try:
        from gpt_block import CausalSelfAttention, GPTConfig
    finally:
        sys.path.remove(str(examples))
    dims = {"B": 2, "T": 64, "C": 32, "n_embd": 32, "n_head": 4}
    record = model_record(tmp_path, capsys, dims, f"{(examples / 'gpt_block.py').as_posix()}:CausalSelfAttention.forward",
                          {"x": "float32 B T C"}, "inference", ["self.flash=false", "config.bias=false"])
    torch.manual_seed(0)
    model = CausalSelfAttention(GPTConfig(block_size=64, n_head=4, n_embd=32, bias=False))
    model.flash = False
    measured = inference_peak(model, (torch.randn(2, 64, 32),))
    memory = record["totals"]["memory"]
    assert (memory["peak"], memory["activations"]) == (measured["peak"], measured["activations"]) == (344064, 327680)
