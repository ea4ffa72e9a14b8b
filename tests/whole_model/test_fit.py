"""`tensorcost fit NAME --memory SIZE [--dim DIM]` (Contract 9): the value it prints fits and the next
does not, by a run of `tensorcost model` at each; exit 1 when even 1 does not fit."""

import json
import re
import shutil

import pytest

from tensorcost_lint.cli.main import main

LLAMA_8B = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096,
            "intermediate_size": 14336, "vocab_size": 128256, "T": 2048}


def _llama_project(tmp_path) -> None:
    """The Llama fixture at Llama-3-8B's sizes, trained in bfloat16 with AdamW."""
    shutil.copytree("tests/whole_model/fixtures/tinyllama", tmp_path / "tinyllama")
    (tmp_path / "tensorcost.yaml").write_text(
        f"dims: {json.dumps(LLAMA_8B)}\ndefault_dtype: bfloat16\nhardware: h100-sxm\n"
        "models:\n  llama8b:\n    entry: tinyllama/model.py:TinyLlama.forward\n    mode: training\n"
        "    optimizer: adamw\n    precision: {parameters: bfloat16}\n"
        "    inputs: {input_ids: int64 batch T, labels: int64 batch T}\n")


def _memory_at(capsys, config, name: str, dim: str, value: int) -> dict:
    assert main(["model", name, "--config", str(config), "--dim", f"{dim}={value}", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["models"][0]["totals"]["memory"]


def _fit(capsys, *argv):
    code = main(["fit", *argv])
    return code, capsys.readouterr().out


def test_llama_8b_on_an_h200_the_printed_batch_fits_and_the_next_does_not(tmp_path, capsys, monkeypatch):
    """By the peak (test_memory_peak holds it against MemTracker); on an 80 GB H100 the bfloat16
    AdamW step does not fit even at batch 1: its foreach step() adds a square root of every
    exp_avg_sq (16 GB) to the parameters, gradients and states (64 GB)."""
    _llama_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out = _fit(capsys, "llama8b", "--memory", "141GB")
    assert code == 0
    largest = int(re.match(r"model llama8b: largest batch that fits 141 GB: (\d+)\n", out).group(1))
    at, above = (_memory_at(capsys, tmp_path / "tensorcost.yaml", "llama8b", "batch", v) for v in (largest, largest + 1))
    assert at["peak"] <= 141 * 10**9 < above["peak"]
    assert f"  batch={largest}: {at['peak']} B " in out and out.count("— fits") == 1
    assert f"  batch={largest + 1}: {above['peak']} B " in out and "— does not fit" in out
    assert _fit(capsys, "llama8b", "--memory", "80GB")[0] == 1
    # the model states by their formulas: 8.03 G bfloat16 parameters; AdamW's two states and a step each
    parameters = 2 * (2 * 128256 * 4096 + 32 * (4096 * (4096 + 2 * 1024 + 4096) + 3 * 4096 * 14336 + 2 * 4096)
                      + 4096)
    assert at["parameters"] == at["gradients"] == parameters == 16060522496
    assert at["optimizer_states"] == 2 * parameters + 4 * (3 + 32 * 9)


def test_even_batch_1_not_fitting_exits_1(tmp_path, capsys, monkeypatch):
    _llama_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out = _fit(capsys, "llama8b", "--memory", "40GB")
    assert code == 1
    assert out.startswith("model llama8b: does not fit 40 GB even at batch=1\n  batch=1: ")


def test_the_searched_dim_and_other_sizes_come_from_dim_flags(tmp_path, capsys, monkeypatch):
    _llama_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out = _fit(capsys, "llama8b", "--memory", "141GB", "--dim", "T", "--dim", "batch=1")
    assert code == 0
    longest = int(re.match(r"model llama8b: largest T that fits 141 GB: (\d+)\n", out).group(1))
    config = tmp_path / "tensorcost.yaml"
    assert main(["model", "llama8b", "--config", str(config), "--dim", "batch=1", "--dim", f"T={longest + 1}",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["models"][0]["totals"]["memory"]["peak"] > 141 * 10**9


@pytest.mark.parametrize("argv, message", [
    (["llama8b", "--memory", "lots"], "--memory"),
    (["nope", "--memory", "80GB"], "models.nope: no such model"),
    (["llama8b", "--memory", "80GB", "--dim", "nobody"], "does not grow with nobody"),
])
def test_usage_errors_are_one_line(tmp_path, capsys, monkeypatch, argv, message):
    _llama_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["fit", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
