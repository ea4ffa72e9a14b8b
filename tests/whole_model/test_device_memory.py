"""TCL504 in `check` (Contract 9): a configured model whose memory passes its hardware profile's
`memory_bytes` is reported at the entry's `def` line; the shipped datasheet devices carry theirs."""

import json

import pytest

from tensorcost_lint.cli.main import main
from tensorcost_lint.hardware.evidence_files import shipped_devices

GPT_DIR = "tests/whole_model/fixtures/tinygpt"
DIMS = {"n_layer": 2, "n_head": 4, "n_embd": 32, "vocab_size": 101, "block_size": 64, "B": 2, "T": 16}


def _project(tmp_path, memory_bytes) -> str:
    """The tiny GPT in training with AdamW, on a device of `memory_bytes`: 123,008 B of parameters,
    246,128 B of AdamW states, 123,008 B of gradients, and the activations autograd saves."""
    import shutil

    shutil.copytree(GPT_DIR, tmp_path / "tinygpt")
    evidence = tmp_path / "device.yaml"
    evidence.write_text("devices:\n  - id: small\n    device: a small device\n    source: test\n    measured: 2026-01-01\n"
                        f"    owner: tests\n    memory_bytes: {memory_bytes}\n")
    config = tmp_path / "tensorcost.yaml"
    config.write_text(
        f"dims: {json.dumps(DIMS)}\nhardware: small\nevidence: [device.yaml]\n"
        "models:\n  gpt:\n    entry: tinygpt/model.py:TinyGPT.forward\n    mode: training\n    optimizer: adamw\n"
        "    inputs: {idx: int64 B T, targets: int64 B T}\n"
        "    assume: {self.flash: true, config.bias: true, config.dropout: 0}\n")
    return str(config)


def test_a_device_smaller_than_the_step_gives_tcl504_at_the_entry(tmp_path, capsys):
    config = _project(tmp_path, "400kB")
    assert main(["check", "--config", config, "--no-cache", str(tmp_path / "tinygpt")]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if "TCL504" in line]
    assert len(lines) == 1
    assert lines[0] == (f"{tmp_path / 'tinygpt' / 'model.py'}:95:5: TCL504 model memory over device memory: "
                        "model `gpt` (training) needs 615 kB at its peak, during optimizer (parameters 123 kB, "
                        "gradients 123 kB, optimizer states 246 kB, activations 155 kB) > small memory_bytes 400 kB; "
                        "use a smaller model or batch, mixed precision, or a device with more memory")


def test_a_device_with_room_gives_no_tcl504(tmp_path, capsys):
    config = _project(tmp_path, "10MB")
    main(["check", "--config", config, "--no-cache", str(tmp_path / "tinygpt")])
    assert "TCL504" not in capsys.readouterr().out


def test_shipped_devices_carry_their_datasheet_memory():
    memory = {device: record.memory_bytes for device, record in shipped_devices().items()}
    assert memory["h100-sxm"] == 80 * 10**9 and memory["a100-80gb"] == 80 * 10**9
    assert (memory["h200"], memory["mi300x"], memory["l4"]) == (141 * 10**9, 192 * 10**9, 24 * 10**9)


@pytest.mark.parametrize("value, reason", [("0", "memory_bytes"), ("lots", "memory_bytes")])
def test_a_bad_memory_bytes_is_a_one_line_error(tmp_path, capsys, value, reason):
    config = _project(tmp_path, value)
    assert main(["check", "--config", config, "--no-cache", str(tmp_path / "tinygpt")]) == 2
    err = capsys.readouterr().err
    assert "device.yaml" in err and reason in err and len(err.strip().splitlines()) == 1
