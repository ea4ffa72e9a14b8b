"""`totals.memory` of a training step (Contract 9) against torch running the same model on CPU:
`parameters` and `optimizer_states` equal MemTracker's categories for a steady-state step (one
untracked warm-up step, then forward, backward, `step()`, `zero_grad()` under the tracker), per
optimizer and precision; `gradients` equals the bytes of every `.grad` after a backward."""

import json

import pytest

torch = pytest.importorskip("torch")

from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.tinygpt.model import TinyConfig, TinyGPT  # noqa: E402
from tests.whole_model.fixtures.tinyllama.model import LlamaConfig, TinyLlama  # noqa: E402
from tests.whole_model.memory_runs import parameter_bytes, state_bytes, tracked_step  # noqa: E402
from tests.whole_model.model_runs import model_record  # noqa: E402

GPT = "tests/whole_model/fixtures/tinygpt/model.py"
LLAMA = "tests/whole_model/fixtures/tinyllama/model.py"
GPT_DIMS = {"n_layer": 2, "n_head": 4, "n_embd": 32, "vocab_size": 101, "block_size": 64, "B": 2, "T": 16}
LLAMA_DIMS = {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 32,
              "intermediate_size": 64, "vocab_size": 101, "B": 2, "T": 16}
OPTIMIZERS = {
    "adamw": lambda params: torch.optim.AdamW(params),
    "adam": lambda params: torch.optim.Adam(params),
    "sgd": lambda params: torch.optim.SGD(params, lr=0.1),
    "sgd-momentum": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9),
    "adafactor": lambda params: torch.optim.Adafactor(params),
}


def _gpt(dims=GPT_DIMS):
    torch.manual_seed(0)
    model = TinyGPT(TinyConfig(n_layer=dims["n_layer"], n_head=dims["n_head"], n_embd=dims["n_embd"],
                               vocab_size=dims["vocab_size"], block_size=dims["block_size"]))
    idx = torch.randint(0, dims["vocab_size"], (dims["B"], dims["T"]))
    return model, (idx, idx)


def _llama():
    torch.manual_seed(0)
    d = LLAMA_DIMS
    model = TinyLlama(LlamaConfig(vocab_size=d["vocab_size"], hidden_size=d["hidden_size"],
                                  intermediate_size=d["intermediate_size"], num_hidden_layers=d["num_hidden_layers"],
                                  num_attention_heads=d["num_attention_heads"],
                                  num_key_value_heads=d["num_key_value_heads"]))
    ids = torch.randint(0, d["vocab_size"], (d["B"], d["T"]))
    return model, (ids, ids)


def _memory(tmp_path, capsys, path, dims, names, *flags, assume=("self.flash=true", "config.bias=true")) -> dict:
    cls = "TinyGPT" if "gpt" in path else "TinyLlama"
    entry = f"{(tmp_path.cwd() / path).as_posix()}:{cls}.forward"
    config = tmp_path / "tensorcost.yaml"
    config.write_text(f"dims: {json.dumps(dims)}\n")
    argv = ["model", "--config", str(config), "--entry", entry, "--mode", "training", "--format", "json", *flags]
    for name in names:
        argv += ["--input", f"{name}=int64 B T"]
    for condition in assume:
        argv += ["--assume", condition]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["models"][0]["totals"]["memory"]


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_gpt_parameters_and_optimizer_states_equal_mem_trackers(tmp_path, capsys, optimizer):
    model, inputs = _gpt()
    opt = OPTIMIZERS[optimizer](model.parameters())
    measured = tracked_step(model, inputs, opt, lambda out: out[1])["after"]
    memory = _memory(tmp_path, capsys, GPT, GPT_DIMS, ("idx", "targets"), "--optimizer", optimizer)
    assert memory["parameters"] == measured["_MemRefType.PARAM"] == parameter_bytes(model) == 123008  # tied head
    assert memory["optimizer_states"] == measured["_MemRefType.OPT"] == state_bytes(opt)
    _, loss = model(*inputs)
    loss.backward()
    assert memory["gradients"] == sum(p.grad.untyped_storage().nbytes() for p in model.parameters())


def test_llama_parameters_and_adamw_states_equal_mem_trackers(tmp_path, capsys):
    model, inputs = _llama()
    opt = torch.optim.AdamW(model.parameters())
    measured = tracked_step(model, inputs, opt, lambda out: out[1])["after"]
    memory = _memory(tmp_path, capsys, LLAMA, LLAMA_DIMS, ("input_ids", "labels"), assume=())
    assert memory["parameters"] == measured["_MemRefType.PARAM"] == parameter_bytes(model)
    assert memory["optimizer_states"] == measured["_MemRefType.OPT"]
    # exp_avg and exp_avg_sq like each parameter, and a float32 `step` per parameter tensor
    assert memory["optimizer_states"] == 2 * memory["parameters"] + 4 * len(list(model.parameters()))


@pytest.mark.parametrize("build", [_gpt, _llama], ids=["gpt", "llama"])
def test_bfloat16_parameters_and_float32_master_weights(tmp_path, capsys, build):
    """Mixed precision: the model in bfloat16, AdamW stepping a float32 copy of each parameter (its
    states are then float32). Parameters are MemTracker's; states and copies the optimizer's own."""
    model, inputs = build()
    for parameter in model.parameters():
        parameter.data = parameter.data.to(torch.bfloat16)  # buffers (rotary frequencies) stay float32
    masters = [p.detach().float().requires_grad_() for p in model.parameters()]
    opt = torch.optim.AdamW(masters)
    measured = tracked_step(model, inputs, torch.optim.SGD(model.parameters(), lr=0.1), lambda out: out[1].float(),
                            autocast=torch.bfloat16)["after"]
    for master in masters:
        master.grad = torch.zeros_like(master)
    opt.step()
    gpt = build is _gpt
    memory = _memory(tmp_path, capsys, GPT if gpt else LLAMA, GPT_DIMS if gpt else LLAMA_DIMS,
                     ("idx", "targets") if gpt else ("input_ids", "labels"), "--precision", "parameters=bfloat16",
                     "--precision", "master_weights=float32", assume=("self.flash=true", "config.bias=true") if gpt
                     else ())
    assert memory["parameters"] == measured["_MemRefType.PARAM"] == parameter_bytes(model)
    assert memory["gradients"] == parameter_bytes(model)  # bfloat16 gradients, like the parameters
    assert memory["master_weights"] == sum(m.untyped_storage().nbytes() for m in masters)
    assert memory["optimizer_states"] == state_bytes(opt)


def test_pure_bfloat16_training_keeps_bfloat16_states(tmp_path, capsys):
    model, inputs = _gpt()
    model = model.to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters())
    measured = tracked_step(model, inputs, opt, lambda out: out[1].float())["after"]
    memory = _memory(tmp_path, capsys, GPT, GPT_DIMS, ("idx", "targets"), "--precision", "parameters=bfloat16")
    assert memory["parameters"] == measured["_MemRefType.PARAM"] == 61504
    assert memory["optimizer_states"] == measured["_MemRefType.OPT"]


def test_memory_formulas_hold_at_other_sizes(tmp_path, capsys):
    """The formula printed at one size gives the bytes a run at another size measures."""
    from shape_annotations import Polynomial, parse_dim_expr

    memory = _memory(tmp_path, capsys, GPT, GPT_DIMS, ("idx", "targets"))
    bigger = {**GPT_DIMS, "n_layer": 3, "n_embd": 48}
    model, inputs = _gpt(bigger)
    opt = torch.optim.AdamW(model.parameters())
    measured = tracked_step(model, inputs, opt, lambda out: out[1])["after"]
    for name, category in (("parameters", "_MemRefType.PARAM"), ("optimizer_states", "_MemRefType.OPT")):
        formula = Polynomial.from_dim(parse_dim_expr(memory["memory_formulas"][name].replace("^2", "**2")))
        assert formula.evaluate(bigger) == measured[category]


def test_unknown_categories_say_why_and_the_lower_bound_holds(tmp_path, capsys):
    model, inputs = _gpt()
    memory = _memory(tmp_path, capsys, GPT, GPT_DIMS, ("idx", "targets"))
    assert memory["activations"] is None and "dropout with an unknown p" in memory["unknown"]["activations"]
    assert memory["peak"] is None and memory["peak_phase"] is None
    measured = tracked_step(model, inputs, torch.optim.AdamW(model.parameters()), lambda out: out[1])
    assert memory["peak_lower_bound"] <= measured["peak"]  # with the contractions standing in for the activations
    assert memory["peak_lower_bound"] == memory["parameters"] + memory["optimizer_states"] + memory["gradients"]


def test_inference_counts_parameters_only(tmp_path, capsys):
    entry = f"{(tmp_path.cwd() / GPT).as_posix()}:TinyGPT.forward"
    record = model_record(tmp_path, capsys, GPT_DIMS, entry, {"idx": "int64 B T"}, "inference",
                          ["self.flash=true", "config.bias=true"])
    memory = record["totals"]["memory"]
    assert (memory["parameters"], memory["gradients"], memory["optimizer_states"]) == (123008, 0, 0)


def test_an_undecided_bias_leaves_parameters_unknown_with_the_reason(tmp_path, capsys):
    memory = _memory(tmp_path, capsys, GPT, GPT_DIMS, ("idx", "targets"), assume=("self.flash=true",))
    assert memory["parameters"] is None
    assert "whether it has a bias is undecided" in memory["unknown"]["parameters"]


@pytest.mark.parametrize("entry_lines, message", [
    ("mode: inference\n    optimizer: adamw", "models.m.optimizer: applies to mode training only"),
    ("mode: training\n    optimizer: rmsprop", "models.m.optimizer: expected one of none, sgd, sgd-momentum"),
    ("mode: training\n    precision: {weights: bfloat16}", "models.m.precision.weights: unknown key"),
    ("mode: training\n    precision: {parameters: bf17}", "models.m.precision.parameters: expected a dtype name"),
    ("mode: prefill\n    cache_len: 128", "models.m.cache_len: applies to mode decode only"),
    ("mode: decode", "models.m.cache_len: required for mode decode"),
    ("mode: training\n    cache_dtype: bfloat16", "models.m.cache_dtype: applies to modes prefill and decode only"),
    ("mode: decode\n    cache_len: 0", "models.m.cache_len: must be positive"),
    ("mode: prefill\n    sequence_dim: T", "models.m.sequence_dim: applies to mode decode only"),
    ("mode: decode\n    cache_len: 8\n    sequence_dim: 'T S'", "models.m.sequence_dim: expected a dim name"),
    ("mode: inference\n    cache_parameter: cache", "models.m.cache_parameter: applies to mode decode only"),
])
def test_bad_memory_keys_are_one_line_errors(tmp_path, capsys, entry_lines, message):
    (tmp_path / "model.py").write_text("import torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
                                       "        return x\n")
    config = tmp_path / "tensorcost.yaml"
    config.write_text(f"models:\n  m:\n    entry: model.py:M.forward\n    {entry_lines}\n")
    assert main(["model", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_module_tree_carries_each_modules_parameter_bytes(tmp_path, capsys):
    """Per module path (all copies of a repeated block together), the bytes of the parameters
    torch's `module.parameters()` yields for it; a tied weight counts where the run meets it first."""
    model, _ = _gpt()
    entry = f"{(tmp_path.cwd() / GPT).as_posix()}:TinyGPT.forward"
    record = model_record(tmp_path, capsys, GPT_DIMS, entry, {"idx": "int64 B T", "targets": "int64 B T"},
                          "training", ["self.flash=true", "config.bias=true", "config.dropout=0"])
    memory = {m["path"]: m["memory"] for m in record["modules"]}
    assert memory[""]["parameters"] == parameter_bytes(model)
    assert memory[""]["activations"] == record["totals"]["memory"]["activations"]
    assert memory["body.layers"]["parameters"] == parameter_bytes(model.body.layers)
    assert memory["body.layers.attn"]["parameters"] == sum(parameter_bytes(layer.attn) for layer in model.body.layers)
    assert memory["head"]["parameters"] == parameter_bytes(model.head)
    assert "parameters" not in memory["body.tokens"]  # the head's weight, tied


def test_prefill_costs_the_forward_and_decode_without_a_cache_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "tinygpt").mkdir()
    for name in ("model.py", "layers.py", "__init__.py"):
        (tmp_path / "tinygpt" / name).write_text((tmp_path.cwd() / "tests/whole_model/fixtures/tinygpt" / name).read_text())
    config = tmp_path / "tensorcost.yaml"
    shared = "entry: tinygpt/model.py:TinyGPT.forward, inputs: {idx: int64 B T}, assume: {self.flash: true, config.bias: true}"
    config.write_text(f"dims: {json.dumps(GPT_DIMS)}\nmodels:\n  infer: {{{shared}}}\n"
                      f"  prefill: {{{shared}, mode: prefill, cache_dtype: bfloat16}}\n")
    assert main(["model", "--config", str(config), "--format", "json"]) == 0
    infer, prefill = json.loads(capsys.readouterr().out)["models"]
    assert prefill["mode"] == "prefill" and prefill["totals"]["flops"] == infer["totals"]["flops"] > 0
    # a model that keeps no cache object returns none: no figure, with why (test_kv_cache.py has one that does)
    assert prefill["totals"]["memory"]["kv_cache"] is None and "no cache object" in \
        prefill["totals"]["memory"]["unknown"]["kv_cache"]
    # decode runs the model's own prefill and passes back the cache it returns: a model that keeps
    # none has no decode step to cost (test_decode_step.py has models that do)
    config.write_text(f"dims: {json.dumps(GPT_DIMS)}\nmodels:\n  decode: {{{shared}, mode: decode, cache_len: 64, "
                      "sequence_dim: T}\n")
    assert main(["model", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "returns no cache object" in err and len(err.strip().splitlines()) == 1


def test_text_prints_the_memory_block_under_the_totals(tmp_path, capsys):
    config = tmp_path / "tensorcost.yaml"
    config.write_text(f"dims: {json.dumps(GPT_DIMS)}\n")
    entry = f"{(tmp_path.cwd() / GPT).as_posix()}:TinyGPT.forward"
    assert main(["model", "--config", str(config), "--entry", entry, "--input", "idx=int64 B T", "--input",
                 "targets=int64 B T", "--mode", "training", "--assume", "self.flash=true", "--assume", "config.bias=true",
                 "--assume", "config.dropout=0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    block = lines[lines.index("memory:"):]
    assert block[1] == ("  parameters        123008 B (123 kB)  = 48*n_embd^2*n_layer + 4*vocab_size*n_embd + "
                        "4*n_embd*block_size + 52*n_embd*n_layer + 8*n_embd")
    assert block[3].startswith("  optimizer_states  246128 B (246 kB)  = ")
    assert block[5] == "  activations       155140 B (155 kB)"  # autograd's figure (test_memory_activations)
    # the peak (test_memory_peak: MemTracker's) with its phase; the lower bound only stands in for an unknown one
    assert block[7] == "  peak              615152 B (615 kB) during optimizer"
    assert len(block) == 8
