"""Facts about a whole model as `check` sees it, stated without words (the rules own the words):
a total over its `models.<name>.budgets` (TCL503), totals grown past the baseline (TCL602)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class BudgetExcess:
    metric: str  # flops | retained_bytes | latency_seconds
    value: int | Decimal
    budget: int | Decimal


@dataclass(frozen=True)
class ModelOverBudget:
    """A configured model whose total FLOPs, peak retained bytes or lower bound pass its budgets."""

    model: str
    mode: str
    excesses: tuple  # BudgetExcess, in the order flops, retained_bytes, latency_seconds


@dataclass(frozen=True)
class ModelRegression:
    """A configured model whose totals grew past `budgets.regression` vs the baseline."""

    model: str
    grown: tuple  # baseline.compare.MetricChange over the model's total metrics
    regression: Decimal


# budget key -> the totals metric it limits
BUDGET_METRICS = {"flops": "flops", "retained_bytes": "peak_retained_bytes", "latency_seconds": "lower_bound_seconds"}


def over_budget(name: str, mode: str, totals: dict, budgets: dict) -> tuple[ModelOverBudget | None, list]:
    """(the fact, or None; the budgets that could not be checked because the total is unknown)."""
    excesses, unchecked = [], []
    for key, metric in BUDGET_METRICS.items():
        budget = budgets.get(key)
        if budget is None:
            continue
        value = totals.get(metric)
        if value is None:
            unchecked.append(key)
            continue
        value = Decimal(value) if metric == "lower_bound_seconds" else value
        limit = Decimal(str(budget)) if key == "latency_seconds" else budget
        if value > limit:
            excesses.append(BudgetExcess(key, value, limit))
    return (ModelOverBudget(name, mode, tuple(excesses)) if excesses else None), unchecked
