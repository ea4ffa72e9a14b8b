"""`check --baseline`: compare a lint report's sites with a baseline and add TCL601 findings.

TCL601 is on whenever a baseline is given, unless the file's `ignore`/`per_file_ignores` (or a
`# noqa: TCL601` on the site's line) turns it off.
"""

from __future__ import annotations

from ..driver.engine import apply_noqa
from ..safe_io.files import UnreadableFile, read_source
from ..rules.findings import Finding
from ..rules.selection import enabled_codes
from ..rules import RULES_BY_CODE
from ..baseline.collect import collect
from ..baseline.compare import Comparison, compare
from ..baseline.document import Baseline, cost_fingerprint

CODE = "TCL601"
MODEL_CODE = "TCL602"


def gate(report, resolver, baseline: Baseline, texts: dict | None = None) -> Comparison:
    """Compare, then add each regression as a TCL601 finding to its file's result (sorted in)."""
    collected = collect(report, resolver, texts)
    comparison = compare(baseline, collected.sites, cost_fingerprint(collected.configs),
                         lambda site: resolver.for_path(site.path).budgets.regression, collected.in_scope)
    if baseline.models or getattr(report, "models", None) is not None:
        from .model_gate import compare_models

        compare_models(comparison, baseline, report, resolver,
                       lambda site: resolver.for_path(site.path).budgets.regression, collected.in_scope)
    rule = RULES_BY_CODE[CODE]
    results = {result.path: result for result in report.results}
    added: dict = {}
    for site, fact in comparison.regressions:
        config = resolver.for_path(site.path)
        if CODE not in enabled_codes(config.select, config.extend_select + (CODE,), config.ignore_for(site.path)):
            continue
        added.setdefault(site.path, []).append(rule.report(site.path, site.line, site.column, rule.message(fact, {}),
                                                           site=site.site_id))
    _model_findings(report, resolver, comparison, added)
    for path, findings in added.items():
        try:
            lines = ((texts or {}).get(path) or read_source(path)).splitlines()
        except UnreadableFile:
            lines = []
        result = results[path]
        result.findings = sorted(result.findings + apply_noqa(findings, lines), key=Finding.sort_key)
    return comparison


def _model_findings(report, resolver, comparison: Comparison, added: dict) -> None:
    """TCL602 at each grown model's entry `def` line, when its file was checked."""
    from .model_gate import entry_result

    rule = RULES_BY_CODE[MODEL_CODE]
    for outcome, fact in comparison.model_regressions:
        result = entry_result(report, outcome)
        if result is None or outcome.definition is None:
            continue
        config = resolver.for_path(result.path)
        if MODEL_CODE not in enabled_codes(config.select, config.extend_select + (MODEL_CODE,),
                                           config.ignore_for(result.path)):
            continue
        line, column = outcome.definition
        added.setdefault(result.path, []).append(rule.report(result.path, line, column, rule.message(fact, {})))


def summary_lines(comparison: Comparison) -> list[str]:
    """What the text summary adds: the notes, the models' changes, then removed and new sites."""
    from ..baseline.wording import METRIC_NAMES, format_ratio, format_value

    lines = [f"baseline: note: {note}" for note in comparison.notes]
    by_model: dict = {}
    for name, change in comparison.model_changes:
        by_model.setdefault(name, []).append(f"{METRIC_NAMES[change.metric]} {format_value(change.metric, change.before)}"
                                             f" → {format_value(change.metric, change.after)} ({format_ratio(change.ratio)})")
    lines += [f"baseline: model `{name}`: " + ", ".join(parts) for name, parts in by_model.items()]
    lines += [f"baseline: new model `{name}`" for name in comparison.new_models]
    lines += [f"baseline: removed model `{name}`" for name in comparison.removed_models]
    lines += [f"baseline: removed site {key.label()}" for key in comparison.removed]
    lines += [f"baseline: new site {key.label()}" for key in comparison.new]
    models = f"{len(comparison.model_regressions)} model(s) grew, " if (comparison.model_changes or comparison.model_regressions
                                                                   or comparison.new_models or comparison.removed_models) else ""
    lines.append(f"baseline: {models}{len(comparison.regressions)} site(s) grew, {len(comparison.new)} new, "
                 f"{len(comparison.removed)} removed")
    return lines
