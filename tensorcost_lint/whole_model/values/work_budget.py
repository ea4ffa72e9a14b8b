"""The one work budget of a whole-model run (config.work_limits.WorkLimits), spent as the run goes.

Spending never raises: a part that is spent makes `spend` answer False, and the caller stops that
piece of work where it is (a statement not run, a call not followed) and lists the cut. Everything
already costed stays; the total is partial and says so.
"""

from __future__ import annotations

_WHAT = {"steps": "statements interpreted", "contexts": "distinct calls analysed",
         "entries": "entries walked for the retained bytes"}


class WorkBudget:
    def __init__(self, limits) -> None:
        self.limits = {"steps": limits.steps, "contexts": limits.contexts, "entries": limits.entries}
        self.used = dict.fromkeys(self.limits, 0)

    def spend(self, kind: str, amount: int = 1) -> bool:
        """Take `amount` of `kind`; False when that part is spent (and stays spent)."""
        used = self.used[kind] + amount
        self.used[kind] = used
        return used <= self.limits[kind]

    def spent(self, kind: str) -> bool:
        return self.used[kind] > self.limits[kind]

    def reason(self, kind: str) -> str:
        return (f"work budget spent: more than {self.limits[kind]:,} {_WHAT[kind]} "
                f"(work_budget.{kind}); the rest is not analysed and the total is partial")
