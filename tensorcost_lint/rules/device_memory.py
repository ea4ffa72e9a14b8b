"""TCL504: a configured model's memory passes its device's (Contract 9).

The fact comes from a whole-model run, not from one file: `check` makes it when the config has
`models:` and the hardware profile names its `memory_bytes` (whole_model.memory_facts); this rule
puts it into words, at the entry's `def` line.
"""

from __future__ import annotations

from estimator.units import format_bytes

from ..whole_model.values.memory_facts import ModelOverDeviceMemory
from .base import Example, Rule

_MODEL = '''import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x):
        return self.down(self.up(x).relu())
'''


def _model_config(hidden: int) -> dict:
    return {"dims": {"B": 8, "T": 1024, "width": 32768, "hidden": hidden}, "hardware": "h100-sxm",
            "models": {"mlp": {"entry": "model.py:MLP.forward", "inputs": {"x": "B T width"}, "mode": "training",
                               "optimizer": "adamw"}}}


class DeviceMemory(Rule):
    code = "TCL504"
    name = "model-memory-over-device"
    summary = ("model memory over device memory: a configured model's `memory.peak` exceeds the hardware "
               "profile's `memory_bytes` (Contract 9)")
    severity = "warning"
    what_it_does = (
        "When the config names whole models (`models:`) and the hardware profile (`hardware`, shipped or from "
        "`evidence`) states its `memory_bytes`, `tensorcost check` compares each model's memory with it: "
        "`totals.memory.peak` (the most a training step holds at one moment, by the liveness model of "
        "docs/memory.md, with the phase it happens in), or, where the peak is not known, `peak_lower_bound` — the "
        "model states (parameters, optimizer states, gradients) and activations the step certainly holds at one "
        "moment (the message then says \"at least\"). A model that needs more than the device has is reported once, at the entry's `def` line."
    )
    why_bad = (
        "A training step that does not fit fails with an out-of-memory error after the job has been scheduled, "
        "its data loaded and its model built. Parameters, AdamW's two states per parameter and the gradients "
        "alone are 16 bytes per float32 parameter; the check says before the run that the device is too small."
    )
    example = ("# models: {mlp: {entry: model.py:MLP.forward, inputs: {x: B T width}, mode: training}}\n"
               "# width 32768, hidden 131072: 8.6 G parameters; hardware: h100-sxm (80 GB)\n"
               "def forward(self, x):  # 172 GB at its peak, during optimizer > 80 GB\n"
               "    return self.down(self.up(x).relu())")
    use_instead = ("# a smaller model, a device with more memory, sharded states (not modelled), or\n"
                   "# mixed precision: models: {mlp: {..., precision: {parameters: bfloat16}}}")
    known_problems = (
        "Where the peak is not known (activations unknown, an undecided branch, activation checkpointing, an "
        "optimizer whose step's temporaries are not modelled) the check uses the lower bound, so it reports "
        "only a model that certainly does not fit; one that fits by the lower bound may still not fit. "
        "Buffers, the allocator's rounding and fragmentation are not counted. Models whose memory is unknown "
        "(`tensorcost model` says why) give no finding."
    )
    options = "`hardware` (the profile), its `memory_bytes`; `models.<name>.optimizer` and `.precision`"
    references = ("[docs/memory.md: the memory model](../memory.md)",)
    valid = (Example(_MODEL, _model_config(1024)),)
    invalid = (Example(_MODEL, _model_config(131072)),)
    facts = (ModelOverDeviceMemory,)

    def check(self, context):
        return iter(())  # made by `check` from a whole-model run (whole_model.check_merge)

    def message(self, fact: ModelOverDeviceMemory, sizes) -> str:
        during = f", during {fact.phase}" if fact.phase else ""
        needs = f"needs {format_bytes(fact.needed)} at its peak{during}" if fact.exact else \
            f"needs at least {format_bytes(fact.needed)} at one moment"
        parts = ", ".join(f"{name.replace('_', ' ')} {format_bytes(value)}" for name, value in fact.parts)
        return (f"model memory over device memory: model `{fact.model}` ({fact.mode}) {needs} ({parts}) > "
                f"{fact.hardware} memory_bytes {format_bytes(fact.memory_bytes)}; use a smaller model or batch, "
                "mixed precision, or a device with more memory")
