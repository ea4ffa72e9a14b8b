"""What whole-model tests do again and again: `tensorcost model` in process on one entry (its JSON
record), and torch's FlopCounterMode on the same model (the figure it must equal)."""

from __future__ import annotations

import json

from tensorcost_lint.cli.main import main


def model_record(tmp_path, capsys, dims: dict, entry: str, inputs: dict, mode: str = "inference",
                 assume=(), config_lines: str = "") -> dict:
    """`tensorcost model --entry ENTRY --input NAME=SPEC ... --format json`'s record for the entry,
    with `dims` (and any further config lines) in a config written under tmp_path. `assume` holds
    `CONDITION=VALUE` or bare `CONDITION` strings, passed as `--assume` each."""
    config = tmp_path / "tensorcost.yaml"
    config.write_text(f"dims: {json.dumps(dims)}\n{config_lines}")
    argv = ["model", "--config", str(config), "--entry", entry, "--mode", mode, "--format", "json"]
    for name, spec in inputs.items():
        argv += ["--input", f"{name}={spec}"]
    for condition in assume:
        argv += ["--assume", condition]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["models"][0]


def counted_flops(model, *inputs, training: bool) -> int:
    """FlopCounterMode's total for one forward on `inputs` and, training, the backward of the
    output's sum (model.train(training): dropout and other mode switches as the mode says)."""
    from torch.utils.flop_counter import FlopCounterMode

    model.train(training)
    with FlopCounterMode(display=False) as counter:
        out = model(*inputs)
        if training:
            out.sum().backward()
    return counter.get_total_flops()
