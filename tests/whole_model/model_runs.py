"""What whole-model tests do again and again: `tensorcost model` in process on one entry (its JSON
record), and torch's FlopCounterMode on the same model (the figure it must equal)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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


def built_record(tmp_path, capsys, fixture: Path, build: str, dims: dict, inputs: dict, mode: str) -> dict:
    """The record of a `models:` entry whose `build:` calls `build` of `fixture`'s module, the file
    copied into a repository under tmp_path (its module imported by name from there)."""
    (tmp_path / ".git").mkdir()
    shutil.copy(fixture, tmp_path / fixture.name)
    config = tmp_path / "tensorcost.yaml"
    config.write_text(f"dims: {json.dumps(dims)}\nmodels:\n  net:\n    build: {json.dumps(f'{fixture.stem}.{build}')}\n"
                      f"    inputs: {json.dumps(inputs)}\n    mode: {mode}\n")
    assert main(["model", "--config", str(config), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["models"][0]


def grouped_mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """FLOPs of `aten._grouped_mm` (FlopCounterMode has no formula for it, so counts it as 0): every
    row of the grouped operand meets exactly one group's matrix (the offsets cover it), so it costs
    what one matmul of those shapes costs — 2·M·K·N; a batch of groups (both operands 3-D) 2·G·M·K·N.
    The backward runs `_grouped_mm` for both gradients, counted by the same formula."""
    if len(a_shape) == 3 and len(b_shape) == 3:
        return 2 * a_shape[0] * a_shape[1] * a_shape[2] * b_shape[2]
    return 2 * a_shape[-2] * a_shape[-1] * b_shape[-1]


def flop_counter():
    """FlopCounterMode with the formula for the grouped matmul of mixture-of-experts layers."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    return FlopCounterMode(display=False, custom_mapping={torch.ops.aten._grouped_mm: grouped_mm_flop})


def counted_flops(model, *inputs, training: bool) -> int:
    """FlopCounterMode's total (with flop_counter's grouped-matmul formula) for one forward on
    `inputs` and, training, the backward of the output's sum (model.train(training): dropout and
    other mode switches as the mode says)."""
    model.train(training)
    with flop_counter() as counter:
        out = model(*inputs)
        if training:
            out.sum().backward()
    return counter.get_total_flops()


def record_and_reference(tmp_path, capsys, model, dims: dict, spec: str, example, mode: str) -> tuple[dict, int]:
    """(`tensorcost model`'s record of `type(model).forward` from its source file, its input `x`
    declared as `spec`; FlopCounterMode's total for `model` run on `example`), in `mode`."""
    import inspect

    cls = type(model)
    record = model_record(tmp_path, capsys, dims, f"{inspect.getfile(cls)}:{cls.__name__}.forward", {"x": spec}, mode)
    return record, counted_flops(model, example, training=mode == "training")
