"""`tensorcost report --memory`: a bar per module of each configured model's retained bytes, the
same numbers `tensorcost model` gives, drawn as SVG text or PNG."""

import json
import re

import pytest

from tensorcost_lint.cli.main import main
from tensorcost_lint.reporting.memory_bars import shown_modules

pytest.importorskip("matplotlib")

LLAMA = "tests/whole_model/fixtures/tinyllama/model.py"
DIMS = {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 32,
        "intermediate_size": 64, "vocab_size": 101, "B": 2, "T": 16}


def _config(tmp_path, models: bool = True) -> str:
    entry = f"{(tmp_path.cwd() / LLAMA).as_posix()}:TinyLlama.forward"
    text = f"dims: {json.dumps(DIMS)}\n"
    if models:  # the fixture lies outside the config's project (tmp_path): read by opt-in
        text += f"source_roots: ['{(tmp_path.cwd() / LLAMA).parent.as_posix()}']\n"
        text += (f"models:\n  infer: {{entry: '{entry}', inputs: {{input_ids: int64 B T}}}}\n"
                 f"  train: {{entry: '{entry}', inputs: {{input_ids: int64 B T, labels: int64 B T}}, "
                 f"mode: training}}\n")
    path = tmp_path / "tensorcost.yaml"
    path.write_text(text)
    return str(path)


def test_memory_svg_has_a_bar_per_module_with_the_models_numbers(tmp_path, capsys):
    config = _config(tmp_path)
    assert main(["model", "--config", config, "--format", "json"]) == 0
    models = {m["name"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    picture = tmp_path / "memory.svg"
    assert main(["report", LLAMA, "--config", config, "--memory", str(picture)]) == 0
    svg = picture.read_text()
    assert "train (training): peak retained 69 KiB" in svg  # 70656 bytes
    assert models["train"]["totals"]["peak_retained_bytes"] == 70656
    assert "infer (inference): peak retained 16.62 KiB" in svg  # 17024 bytes
    kept = {m["path"]: m["retained_bytes"] for m in models["train"]["modules"]}
    assert kept["layers.mlp.down_proj"] == 16384  # the SwiGLU product, B*T*intermediate float32, per layer
    assert "· · · down_proj (Linear)" in svg and "16 KiB" in svg
    # modules that keep nothing get no bar: k_proj and v_proj save the same hidden_states q_proj does
    shown = [m["path"] for m in shown_modules(models["train"]["modules"])]
    assert shown == ["", "layers", "layers.mlp", "layers.mlp.down_proj", "layers.mlp.gate_proj", "layers.self_attn",
                     "layers.self_attn.q_proj", "lm_head"]
    assert len(re.findall(r"· · · q_proj \(Linear\)", svg)) == 2  # a bar in each model's panel
    assert len(re.findall(r"· · · k_proj \(Linear\)", svg)) == 1  # inference only


def test_memory_png(tmp_path):
    picture = tmp_path / "memory.png"
    assert main(["report", LLAMA, "--config", _config(tmp_path), "--memory", str(picture)]) == 0
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("models, target, fragment", [
    (True, "memory.jpg", "memory.jpg: name a .png or .svg file"),
    (False, "memory.png", "models: no models configured; --memory draws them"),
])
def test_memory_bad_input_is_one_line_exit_2(tmp_path, capsys, models, target, fragment):
    assert main(["report", LLAMA, "--config", _config(tmp_path, models), "--memory", str(tmp_path / target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err
