"""TCL601: a call site costs more than it did in the baseline (Contract 8, `check --baseline`).

The fact comes from comparing two runs, not from one file: `check --baseline` makes it
(baseline.compare) and this rule puts it into words. In a plain lint pass it raises nothing.
"""

from __future__ import annotations

from ..baseline.compare import SiteRegression
from ..baseline.wording import METRIC_NAMES, format_percent, format_ratio, format_value
from .base import Example, Rule

_BEFORE = ('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
           'def mix(x: Float[Tensor, "b s d"], w: Float[Tensor, "d f"]):\n    return x @ w\n')
_DIMS = {"b": 8, "s": 1024, "d": 768, "f": 3072}


class CostRegression(Rule):
    code = "TCL601"
    name = "cost-regression"
    summary = ("cost regression: a call site's FLOPs, output bytes, traffic or lower bound grew past "
               "`budgets.regression` vs the baseline")
    severity = "warning"
    default_enabled = False
    enabled_note = "on with `--baseline`"
    what_it_does = (
        "With `tensorcost check --baseline tensorcost-baseline.json`, compares every resolved call site with the "
        "same site in the baseline (same file, enclosing function, expression and occurrence — line numbers do not "
        "matter) and flags one whose FLOPs, output bytes, traffic or roofline lower bound grew by more than "
        "`budgets.regression`. New and removed sites are listed in the summary, not flagged."
    )
    why_bad = (
        "The costs are exact, so any growth is real, not noise: a change that doubles a projection's FLOPs doubles "
        "what every training step and every request pays. A gate on the pull request shows it before it merges."
    )
    example = ("# baseline: self.c_fc = nn.Linear(n_embd, 4 * n_embd)\n"
               "self.c_fc = nn.Linear(n_embd, 8 * n_embd)  # ×2.0 FLOPs in self.c_fc(x)")
    use_instead = ("# keep the cost, or accept the growth and write a new baseline:\n"
                   "# tensorcost baseline --output tensorcost-baseline.json")
    options = ("`budgets.regression` (default `0%`: any growth; `5%` lets a 4% growth through), "
               "`--baseline FILE`; `tensorcost baseline` writes the file")
    references = ("[Contract 8 and the CI workflow](../ci.md)",)
    valid = (
        Example(_BEFORE, {"dims": _DIMS}, baseline=_BEFORE),
        Example(_BEFORE, {"dims": {**_DIMS, "s": 1060}, "budgets": {"regression": "5%"}}, baseline=_BEFORE,
                baseline_config={"dims": _DIMS}),
    )
    invalid = (
        Example(_BEFORE, {"dims": {**_DIMS, "f": 6144}}, baseline=_BEFORE, baseline_config={"dims": _DIMS}),
        Example(_BEFORE, {"dims": _DIMS}, baseline=_BEFORE.replace("Float[", "BFloat16[").replace(
            "import Float", "import BFloat16")),
    )
    facts = (SiteRegression,)

    def message(self, fact: SiteRegression, sizes) -> str:
        parts = [f"{METRIC_NAMES[c.metric]} {format_value(c.metric, c.before)} → {format_value(c.metric, c.after)} "
                 f"({format_ratio(c.ratio)})" for c in fact.grown]
        return (f"cost regression: {fact.label} grew past budgets.regression {format_percent(fact.regression)}: "
                + ", ".join(parts) + "; reduce the cost, or accept it with `tensorcost baseline`")
