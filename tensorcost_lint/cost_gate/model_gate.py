"""`check --baseline` for configured models (Contract 8): each model's totals against the
baseline's (TCL602 at the entry's `def` line), and the sites reached only from a model against
theirs (TCL601, like any site), from the runs `check` made (`report.models`)."""

from __future__ import annotations

import os

from .. import __version__
from ..safe_io.files import UnreadableFile, read_source
from ..model_check.check_merge import configured_models
from ..whole_model.values.model_facts import ModelRegression
from ..baseline.collect import CurrentSite
from ..baseline.compare import Comparison, MetricChange, compare, grew
from ..baseline.document import Baseline
from ..baseline.identity import Scopes, keyed, relative_path
from ..baseline.model_document import MODEL_METRICS, ModelBaseline, ModelSiteKey, site_costs


def current_models(report, resolver) -> tuple[dict, dict]:
    """({name: ModelBaseline}, {ModelSiteKey: CurrentSite}) of the models `check` ran."""
    models_in_check = getattr(report, "models", None)
    if models_in_check is None:
        return {}, {}
    models, sites = {}, {}
    for _, outcome in models_in_check.outcomes:
        if outcome.error is None:
            models[outcome.name] = ModelBaseline(outcome.entry, outcome.mode, _exact(outcome.totals))
    for path, records in sorted(models_in_check.records.items()):
        config = resolver.for_path(path)
        try:
            text = read_source(path)
        except UnreadableFile:
            continue
        positions = {(r["line"], r["column"]): r["expression"] for r in records if r["resolved"]}
        keys = dict(keyed(relative_path(path, config.root), Scopes(text),
                          [(line, column, expression, (line, column)) for (line, column), expression in positions.items()]))
        by_position = {position: key for key, position in keys.items()}
        for record in records:
            key = by_position.get((record["line"], record["column"]))
            if key is None or record["flops"] is None:
                continue
            for context in record["contexts"]:
                if context["model"] not in models:
                    continue
                module = ",".join(context["modules"])
                model_key = ModelSiteKey(key.path, key.qualname, key.expression, key.occurrence, context["model"], module)
                number = 2
                while model_key in sites:  # one module path reaching one site with two shapes
                    model_key = ModelSiteKey(*[getattr(key, f) for f in ("path", "qualname", "expression", "occurrence")],
                                             context["model"], f"{module}#{number}")
                    number += 1
                sites[model_key] = CurrentSite(path, record["line"], record["column"], record["id"], site_costs(record))
                models[context["model"]].sites[model_key] = sites[model_key].costs
    return models, sites


def _exact(totals: dict) -> dict:
    from decimal import Decimal

    return {metric: (Decimal(totals[metric]) if metric == "lower_bound_seconds" and totals.get(metric) is not None
                     else totals.get(metric)) for metric in MODEL_METRICS}


def compare_models(comparison: Comparison, baseline: Baseline, report, resolver, regression_for, in_scope) -> None:
    """Adds the models' changes, regressions, new and removed models, and their sites, to `comparison`."""
    current, sites = current_models(report, resolver)
    before = baseline.models or {}
    comparison.new_models = sorted(set(current) - set(before))
    # A run that did not analyse the models it has (`check -`, `--fix`) says nothing of removal;
    # a config without `models:` any more has removed them all.
    ran = getattr(report, "models", None) is not None
    if ran or not configured_models(report, resolver):
        comparison.removed_models = sorted(set(before) - set(current))
    outcomes = {outcome.name: (config, outcome) for config, outcome in report.models.outcomes} if current else {}
    for name in sorted(set(current) & set(before)):
        config, outcome = outcomes[name]
        changes = []
        for metric in MODEL_METRICS:
            old, new = before[name].totals.get(metric), current[name].totals.get(metric)
            if old is None or new is None or old == new:
                continue
            changes.append(MetricChange(metric, old, new))
        comparison.model_changes.extend((name, change) for change in changes)
        threshold = config.budgets.regression
        grown = tuple(change for change in changes if grew(change, threshold))
        if grown:
            comparison.model_regressions.append((outcome, ModelRegression(name, grown, threshold)))
    then = {key: costs for name, model in before.items() if name in current for key, costs in model.sites.items()}
    fingerprint = "same"
    sites_comparison = compare(Baseline(__version__, fingerprint, then), sites, fingerprint, regression_for, in_scope)
    comparison.regressions.extend(sites_comparison.regressions)
    comparison.changes.extend(sites_comparison.changes)
    comparison.new.extend(sites_comparison.new)
    comparison.removed.extend(sites_comparison.removed)


def entry_result(report, outcome):
    real = os.path.realpath(outcome.entry_path)
    return next((r for r in report.results if os.path.realpath(r.path) == real), None)


__all__ = ["compare_models", "current_models", "entry_result", "CurrentSite"]
