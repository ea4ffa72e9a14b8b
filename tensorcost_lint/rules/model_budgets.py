"""TCL503: a configured model's total FLOPs, peak retained bytes or roofline lower bound passes
its `models.<name>.budgets` (Contract 7).

The fact comes from a whole-model run, not from one file: `check` makes it when the config has
`models:` (whole_model.in_check) and this rule puts it into words, at the entry's `def` line.
"""

from __future__ import annotations

from estimator.units import format_bytes, format_flops, format_seconds

from ..whole_model.values.model_facts import ModelOverBudget
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
_WORDS = {"flops": ("total FLOPs", format_flops), "retained_bytes": ("peak retained bytes", format_bytes),
          "latency_seconds": ("lower bound", format_seconds)}


def _model_config(budgets: dict) -> dict:
    return {"dims": {"B": 8, "T": 1024, "width": 768, "hidden": 3072},
            "models": {"mlp": {"entry": "model.py:MLP.forward", "inputs": {"x": "B T width"}, "budgets": budgets}}}


class ModelBudget(Rule):
    code = "TCL503"
    name = "model-budget"
    summary = ("whole-model budget: a configured model's total FLOPs, peak retained bytes or lower bound over "
               "`models.<name>.budgets` (Contract 7)")
    severity = "warning"
    what_it_does = (
        "When the config names whole models (`models:`), `tensorcost check` analyses each one from its entry and "
        "compares its totals with the entry's `budgets`: `flops` (forward, plus backward in training), "
        "`retained_bytes` (`totals.peak_retained_bytes`) and `latency_seconds` (the roofline lower bound of the "
        "whole forward). A total over its budget is reported once, at the entry's `def` line, with every budget "
        "it passes."
    )
    why_bad = (
        "A budget per call site cannot see that a model runs its block `n_layer` times, or that a config change "
        "doubled every projection at once. The whole model's total is what a training step or a request pays; "
        "a budget on it catches the change that makes the model too costly before it is trained or deployed."
    )
    example = ("# models: {mlp: {entry: model.py:MLP.forward, inputs: {x: B T width},\n"
               "#                budgets: {flops: 20000000000}}}   width 768, hidden 3072, B·T 8192\n"
               "def forward(self, x):  # 77.3 GFLOP > 20 GFLOP\n"
               "    return self.down(self.up(x).relu())")
    use_instead = ("# a smaller hidden width, or a budget that states what the model may cost:\n"
                   "# models: {mlp: {..., budgets: {flops: 80000000000}}}")
    known_problems = (
        "A budget whose total the analysis cannot compute gives no finding, and the summary of `tensorcost check` "
        "says which (`models: note: ...`): `retained_bytes` when the run cannot compute "
        "`peak_retained_bytes` (a tensor of unknown size; `tensorcost model` says why), `latency_seconds` in training mode (the backward has no bound yet) or without "
        "hardware evidence for some site. The finding is made only when the entry's file is among the files "
        "checked (`tensorcost check .` always is)."
    )
    options = ("`models.<name>.budgets.flops`, `.retained_bytes` (bytes), `.latency_seconds`; each null (the default) "
               "is off. `hardware` and `evidence` set the bound")
    references = ("[Contract 7: whole models](../whole-models/index.md)",)
    valid = (Example(_MODEL, _model_config({"flops": 80 * 10**9, "latency_seconds": 0.01})),)
    invalid = (
        Example(_MODEL, _model_config({"flops": 20 * 10**9})),
        Example(_MODEL, _model_config({"flops": 10**12, "latency_seconds": 0.00001})),
    )
    facts = (ModelOverBudget,)

    def check(self, context):
        return iter(())  # made by `check` from a whole-model run (whole_model.check_merge)

    def message(self, fact: ModelOverBudget, sizes) -> str:
        parts = []
        for excess in fact.excesses:
            what, shown = _WORDS[excess.metric]
            parts.append(f"{what} {shown(excess.value)} > budgets.{excess.metric} {shown(excess.budget)}")
        return (f"whole-model budget: model `{fact.model}` ({fact.mode}) is over models.{fact.model}.budgets: "
                + "; ".join(parts) + "; reduce the model's cost or raise the budget")
