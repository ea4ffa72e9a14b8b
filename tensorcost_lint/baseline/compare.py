"""The current sites against a baseline: what grew past `budgets.regression`, what is new, what went.

Growth is judged exactly: a metric regresses when after > before × (1 + regression), in integers
and Decimals, so `5%` lets 104 through and stops 106, with no float noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

from .. import __version__
from .document import METRICS, Baseline


@dataclass(frozen=True)
class MetricChange:
    metric: str  # one of document.METRICS
    before: int | Decimal
    after: int | Decimal

    @property
    def ratio(self) -> Fraction | None:
        """after / before; None when before is zero (a cost appeared from nothing)."""
        if not self.before:
            return None
        return Fraction(self.after) / Fraction(self.before)


@dataclass(frozen=True)
class SiteRegression:
    """The fact TCL601 words: a site whose costs grew past the allowed growth."""

    label: str
    grown: tuple  # MetricChange, the metrics past the threshold
    regression: Decimal  # the allowed growth, as a fraction


@dataclass
class Comparison:
    regressions: list = field(default_factory=list)  # (CurrentSite, SiteRegression)
    changes: list = field(default_factory=list)  # (SiteKey, MetricChange) for every changed metric
    new: list = field(default_factory=list)  # SiteKey, sorted
    removed: list = field(default_factory=list)  # SiteKey, sorted
    notes: list = field(default_factory=list)  # the version / fingerprint differences
    # configured models (model_gate): totals changes and regressions by model name, models new and gone
    model_changes: list = field(default_factory=list)  # (name, MetricChange)
    model_regressions: list = field(default_factory=list)  # (ModelOutcome, ModelRegression)
    new_models: list = field(default_factory=list)
    removed_models: list = field(default_factory=list)


def grew(change: MetricChange, regression: Decimal) -> bool:
    return Fraction(change.after) > Fraction(change.before) * (1 + Fraction(regression))


def compare(baseline: Baseline, current: dict, fingerprint: str, regression_for, in_scope=lambda path: True) -> Comparison:
    """`current`: {SiteKey: CurrentSite}; `regression_for(CurrentSite)` the threshold of its config;
    `in_scope(path)` whether a baseline file missing from `current` counts as removed."""
    result = Comparison()
    if baseline.tool_version != __version__:
        result.notes.append(f"the baseline was written by tensorcost {baseline.tool_version}, this is "
                            f"{__version__}; costs compared anyway")
    if baseline.config_fingerprint != fingerprint:
        result.notes.append("the config fingerprint differs from the baseline's (dims, dtypes, hardware, execution "
                            "or policies changed); costs compared anyway")
    result.new = sorted(set(current) - set(baseline.sites))
    result.removed = sorted(key for key in set(baseline.sites) - set(current) if in_scope(key.path))
    for key in sorted(set(current) & set(baseline.sites)):
        site, before = current[key], baseline.sites[key]
        changes = []
        for metric in METRICS:
            old, new = before.value(metric), site.costs.value(metric)
            if old is None or new is None or old == new:
                continue
            changes.append(MetricChange(metric, old, new))
        result.changes.extend((key, change) for change in changes)
        threshold = regression_for(site)
        grown = tuple(change for change in changes if grew(change, threshold))
        if grown:
            result.regressions.append((site, SiteRegression(key.label(), grown, threshold)))
    return result
