"""TCL602: a configured model's totals grew past `budgets.regression` vs the baseline (Contract 8).

The fact comes from comparing two whole-model runs: `check --baseline` makes it
(baseline.model_gate) and this rule puts it into words, at the entry's `def` line.
"""

from __future__ import annotations

from ..baseline.wording import METRIC_NAMES, format_percent, format_ratio, format_value
from ..whole_model.values.model_facts import ModelRegression
from .base import Example, Rule
from .model_budgets import _MODEL

_CONFIG = {"dims": {"B": 8, "T": 1024, "width": 768, "hidden": 3072},
           "models": {"mlp": {"entry": "model.py:MLP.forward", "inputs": {"x": "B T width"}}}}


class ModelCostRegression(Rule):
    code = "TCL602"
    name = "model-cost-regression"
    summary = "model cost regression: a configured model's totals grew past `budgets.regression` vs the baseline"
    severity = "warning"
    default_enabled = False
    enabled_note = "on with `--baseline`"
    what_it_does = (
        "With `tensorcost check --baseline tensorcost-baseline.json` and `models:` in the config, compares each "
        "model's totals — FLOPs (and their forward and backward parts), traffic, peak retained bytes and the "
        "lower bound — with the totals the baseline recorded for the model of the same name, and flags a model "
        "whose totals grew by more than `budgets.regression`, at its entry's `def` line. Models new or gone since "
        "the baseline are listed in the summary, not flagged."
    )
    why_bad = (
        "A change can keep every site's cost and still make the model costlier: one more layer (`n_layer`), a "
        "branch now taken, a block called twice. Only the whole model's total shows it, and it is exact: any "
        "growth is real, not noise."
    )
    example = ("# baseline written with n_layer: 12\n"
               "dims: {n_layer: 24}  # every block's sites cost the same; the model's FLOPs ×2.0")
    use_instead = ("# keep the cost, or accept the growth and write a new baseline:\n"
                   "# tensorcost baseline --output tensorcost-baseline.json")
    known_problems = ("The totals are compared only when the entry's file is among the files checked; the summary "
                      "lists every model's changed totals either way.")
    options = "`budgets.regression` (default `0%`), `--baseline FILE`; `tensorcost baseline` writes the file"
    references = ("[Contract 8 and the CI workflow](../ci.md)",)
    valid = (Example(_MODEL, _CONFIG, baseline=_MODEL),)
    invalid = (Example(_MODEL, {**_CONFIG, "dims": {**_CONFIG["dims"], "T": 2048}}, baseline=_MODEL,
                       baseline_config=_CONFIG, expect=("TCL602", "TCL601")),)
    facts = (ModelRegression,)

    def check(self, context):
        return iter(())  # made by `check --baseline` (baseline.model_gate)

    def message(self, fact: ModelRegression, sizes) -> str:
        parts = [f"{METRIC_NAMES.get(c.metric, c.metric)} {format_value(c.metric, c.before)} → "
                 f"{format_value(c.metric, c.after)} ({format_ratio(c.ratio)})" for c in fact.grown]
        return (f"model cost regression: model `{fact.model}` grew past budgets.regression "
                f"{format_percent(fact.regression)}: " + ", ".join(parts)
                + "; reduce the cost, or accept it with `tensorcost baseline`")
