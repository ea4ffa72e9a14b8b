"""`tensorcost model` on our own nanoGPT-style fixture against torch's FlopCounterMode: exact
equality of inference and training totals (FlopCounterMode runs the fixture on the meta device,
where scaled_dot_product_attention takes the math path: two matmuls forward, each twice backward)."""

import json

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from tensorcost_lint.cli.main import main
from tests.whole_model.fixtures.tinygpt.model import TinyConfig, TinyGPT

FIXTURE = "tests/whole_model/fixtures/tinygpt/model.py"


def _reference(dims: dict, training: bool) -> tuple[int, int]:
    """(FLOPs, forward FLOPs) as FlopCounterMode counts them."""
    config = TinyConfig(n_layer=dims["n_layer"], n_head=dims["n_head"], n_embd=dims["n_embd"],
                        vocab_size=dims["vocab_size"], block_size=dims["block_size"])
    with torch.device("meta"):
        model = TinyGPT(config)
        idx = torch.zeros(dims["B"], dims["T"], dtype=torch.long)
    if not training:
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            model(idx)
        return counter.get_total_flops(), counter.get_total_flops()
    for layer in model.body.layers:
        layer.attn.flash = False
    with FlopCounterMode(display=False) as forward_counter:
        _, loss = model(idx, idx)
    with FlopCounterMode(display=False) as counter:
        _, loss = model(idx, idx)
        loss.backward()
    return counter.get_total_flops(), forward_counter.get_total_flops()


def _config(tmp_path, dims: dict) -> str:
    entry = f"{(tmp_path.cwd() / FIXTURE).as_posix()}:TinyGPT.forward"
    # the fixture lies outside the config's project (tmp_path): read by opt-in, as Contract 7a's source_roots
    text = (f"dims: {json.dumps(dims)}\ncausal_attention_flops: dense\n"
            f"source_roots: ['{(tmp_path.cwd() / FIXTURE).parent.as_posix()}']\nmodels:\n"
            f"  infer: {{entry: '{entry}', inputs: {{idx: int64 B T}}}}\n"
            f"  train: {{entry: '{entry}', inputs: {{idx: int64 B T, targets: int64 B T}}, mode: training,\n"
            f"          assume: {{self.flash: false}}}}\n")
    path = tmp_path / "tensorcost.yaml"
    path.write_text(text)
    return str(path)


GPT2_SMALL = {"n_layer": 12, "n_head": 12, "n_embd": 768, "vocab_size": 50304, "block_size": 1024, "B": 2, "T": 256}
TINY = {"n_layer": 3, "n_head": 4, "n_embd": 32, "vocab_size": 101, "block_size": 64, "B": 2, "T": 16}


@pytest.mark.parametrize("dims", [TINY, GPT2_SMALL], ids=["tiny", "gpt2-small"])
def test_model_totals_equal_flop_counter_mode(tmp_path, capsys, dims):
    assert main(["model", "--config", _config(tmp_path, dims), "--format", "json"]) == 0
    models = {m["name"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    inference_total, _ = _reference(dims, training=False)
    training_total, training_forward = _reference(dims, training=True)
    infer, train = models["infer"]["totals"], models["train"]["totals"]
    assert infer["flops"] == inference_total
    assert infer["flops_range"] == [inference_total, inference_total]
    assert infer["backward_flops"] == 0
    assert train["flops"] == training_total
    assert train["forward_flops"] == training_forward
    assert train["backward_flops"] == training_total - training_forward
    assert models["infer"]["undecided"] == ["self.flash"]  # both sides cost the same here
    assert models["train"]["undecided"] == []
    assert models["infer"]["unresolved_sites"] == models["train"]["unresolved_sites"] == 0


def test_gpt2_small_numbers(tmp_path, capsys):
    """The numbers the lead measured for nanoGPT with FlopCounterMode hold for our fixture too."""
    assert main(["model", "--config", _config(tmp_path, GPT2_SMALL), "--format", "json"]) == 0
    models = {m["name"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    assert models["infer"]["totals"]["flops"] == 91_959_459_840
    assert models["train"]["totals"]["flops"] == 394_096_803_840
    sites = {(s["module"], s["expression"]): s for s in models["infer"]["sites"]}
    scores = sites[("body.layers.attn", "q @ k.transpose(-2, -1)")]
    assert scores["executions"] == 12 and scores["flops"] == 12 * 2 * 2 * 12 * 256 * 256 * 64
    assert scores["path"] == "tests/whole_model/fixtures/tinygpt/layers.py" or scores["path"].endswith(
        "tests/whole_model/fixtures/tinygpt/layers.py")
    head = sites[("head", "self.head(x[:, [-1], :])")]
    assert head["executions"] == 1 and head["flops"] == 2 * 2 * 1 * 768 * 50304


def test_fused_attention_training_counts_flop_counter_modes_sdpa_formulas(tmp_path, capsys):
    """With `self.flash` true the attention is one fused SDPA: FlopCounterMode's registered formulas
    for the fused kernels (forward: two matmuls; backward: four gradient matmuls and the score
    recompute) replace the manual branch's matmuls; every linear keeps its 2x backward."""
    from torch.utils.flop_counter import sdpa_backward_flop_count, sdpa_flop_count

    dims = TINY
    entry = f"{(tmp_path.cwd() / FIXTURE).as_posix()}:TinyGPT.forward"
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {json.dumps(dims)}\ncausal_attention_flops: dense\n")
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", entry, "--input", "idx=int64 B T",
            "--input", "targets=int64 B T", "--mode", "training", "--assume", "self.flash=true", "--format", "json"]
    assert main(argv) == 0
    totals = json.loads(capsys.readouterr().out)["models"][0]["totals"]
    manual_total, _ = _reference(dims, training=True)
    batch, heads, steps = dims["B"], dims["n_head"], dims["T"]
    head_dim = dims["n_embd"] // heads
    shape = (batch, heads, steps, head_dim)
    manual_attention = 3 * 2 * (2 * batch * heads * steps * steps * head_dim)  # two bmm, each 1 + 2 times
    fused = sdpa_flop_count(shape, shape, shape) + sdpa_backward_flop_count(shape, shape, shape, shape)
    assert totals["flops"] == manual_total + dims["n_layer"] * (fused - manual_attention)


def test_unmasked_counts_only_the_scores_a_causal_mask_keeps(tmp_path, capsys):
    dims = TINY
    entry = f"{(tmp_path.cwd() / FIXTURE).as_posix()}:TinyGPT.forward"
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {json.dumps(dims)}\n")  # unmasked: the default
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", entry, "--input", "idx=int64 B T",
            "--assume", "self.flash=true", "--format", "json"]
    assert main(argv) == 0
    totals = json.loads(capsys.readouterr().out)["models"][0]["totals"]
    dense_total, _ = _reference(dims, training=False)
    batch, heads, steps = dims["B"], dims["n_head"], dims["T"]
    head_dim = dims["n_embd"] // heads
    dense_attention = 2 * 2 * batch * heads * steps * steps * head_dim
    kept_attention = 2 * batch * heads * (steps * (steps + 1) // 2) * 2 * head_dim
    assert totals["flops"] == dense_total - dims["n_layer"] * (dense_attention - kept_attention)
