"""`models:` and `causal_attention_flops` in the config: valid entries load; every mistake exits 2
with one line naming the file, the key and the reason."""

import json

import pytest

from shape_annotations import render_dim

from tensorcost_lint.cli.main import main
from tensorcost_lint.config.config_discovery import load_config_file


def test_entry_fields_are_read(tmp_path):
    (tmp_path / "gpt2.config.json").write_text(json.dumps(
        {"n_layer": 12, "n_embd": 768, "layer_norm_epsilon": 1e-5, "scale_attn_weights": True, "model_type": "gpt2"}))
    (tmp_path / "tensorcost.yaml").write_text(
        "causal_attention_flops: dense\n"
        "models:\n"
        "  gpt2-small:\n"
        "    entry: model.py:GPT.forward\n"
        "    inputs: {idx: \"int64 B T\", mask: \"B 1 T T\"}\n"
        "    dims_from: gpt2.config.json\n"
        "    mode: training\n"
        "    assume: {\"self.flash\": false, \"config.kind\": gelu}\n"
        "    budgets: {flops: 1000, retained_bytes: 2GiB, latency_seconds: 0.5}\n")
    config = load_config_file(tmp_path / "tensorcost.yaml")
    assert config.causal_attention_flops == "dense"
    (model,) = config.models
    assert model.name == "gpt2-small" and model.qualname == "GPT.forward"
    assert model.path == str(tmp_path / "model.py")
    assert [(i.name, i.dtype, tuple(map(render_dim, i.dims))) for i in model.inputs] == [
        ("idx", "int64", ("B", "T")), ("mask", None, ("B", "1", "T", "T"))]
    assert model.dims == {"n_layer": 12, "n_embd": 768}  # integers only: no floats, bools or strings
    assert model.mode == "training"
    assert model.assume == {"self.flash": False, "config.kind": "gelu"}
    assert model.budgets["flops"] == 1000 and model.budgets["retained_bytes"] == 2 * 2**30  # a byte size


@pytest.mark.parametrize("text, message", [
    ("causal_attention_flops: sparse\n",
     "causal_attention_flops: expected one of unmasked, dense, got 'sparse'"),
    ("models: {m: {inputs: {x: B T}}}\n", "models.m.entry: required key is missing"),
    ("models: {m: {entry: model.py}}\n", "models.m.entry: expected FILE:QUALNAME, e.g. model.py:GPT.forward"),
    ("models: {m: {entry: 'model.py:GPT.forward', mode: eval}}\n",
     "models.m.mode: expected one of inference, training, prefill, decode, got 'eval'"),
    ("models: {m: {entry: 'model.py:GPT.forward', inputs: {x: 'int64 B ...T'}}}\n", "models.m.inputs.x: invalid shape"),
    ("models: {m: {entry: 'model.py:GPT.forward', inputs: {x: 3}}}\n",
     "models.m.inputs.x: expected a string like \"int64 B T\", got 3"),
    ("models: {m: {entry: 'model.py:GPT.forward', dims_from: missing.json}}\n", "missing.json: file not found"),
    ("models: {m: {entry: 'model.py:GPT.forward', budgets: {flop: 3}}}\n", "models.m.budgets.flop: unknown key"),
    ("models: {m: {entry: 'model.py:GPT.forward', budgets: {flops: -3}}}\n",
     "models.m.budgets.flops: must be positive, got -3"),
    ("models: {m: {entry: 'model.py:GPT.forward', assume: {self.flash: [1]}}}\n",
     "models.m.assume.self.flash: expected true, false, a number or a string, got [1]"),
    ("models: {m: {entry: 'model.py:GPT.forward', typo: 1}}\n", "models.m.typo: unknown key"),
    ("models: {m: {entry: 'model.py:GPT.forward', budgets: {retained_bytes: lots}}}\n",
     "models.m.budgets.retained_bytes: expected a byte size like 256MiB, 1GiB or 1.5GB, got 'lots'"),
    ("models: [1]\n", "models: expected a mapping, got a list"),
])
def test_config_errors_exit_2_with_one_line(tmp_path, capsys, monkeypatch, text, message):
    (tmp_path / "tensorcost.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    assert main(["model"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tensorcost: error: ")
    assert "tensorcost.yaml" in err and message in err


def test_entry_problems_exit_2_with_one_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "net.py").write_text("class Net:\n    def forward(self, x):\n        return x\n")
    monkeypatch.chdir(tmp_path)
    cases = [
        (["model", "--entry", "net.py:Other.forward"], "Other is not defined at the top level of this file"),
        (["model", "--entry", "net.py:Net.backward"], "Net.backward is not a method of Net"),
        (["model", "--entry", "net.py:Net.forward", "--input", "y=B T"], "has no parameter 'y' (inputs.y)"),
        (["model", "--entry", "gone.py:Net.forward"], "gone.py: file not found"),
        (["model", "--entry", "net.py:Net.forward", "--input", "x"], "--input: x: expected NAME=SPEC"),
        (["model", "--entry", "net.py:Net.forward", "--assume", "=1"], "--assume: =1: expected EXPR=VALUE"),
        (["model", "--mode", "training"], "--mode: only with --entry"),
        (["model", "nope"], "models: no models configured; add `models:` or pass --entry"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, (argv, err)
