"""`check --baseline`: compare a lint report's sites with a baseline and add TCL601 findings.

TCL601 is on whenever a baseline is given, unless the file's `ignore`/`per_file_ignores` (or a
`# noqa: TCL601` on the site's line) turns it off.
"""

from __future__ import annotations

from ..engine import apply_noqa
from ..files import UnreadableFile, read_source
from ..findings import Finding
from ..rule_selection import enabled_codes
from ..rules import RULES_BY_CODE
from .collect import collect
from .compare import Comparison, compare
from .document import Baseline, cost_fingerprint

CODE = "TCL601"


def gate(report, resolver, baseline: Baseline, texts: dict | None = None) -> Comparison:
    """Compare, then add each regression as a TCL601 finding to its file's result (sorted in)."""
    collected = collect(report, resolver, texts)
    comparison = compare(baseline, collected.sites, cost_fingerprint(collected.configs),
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
    for path, findings in added.items():
        try:
            lines = ((texts or {}).get(path) or read_source(path)).splitlines()
        except UnreadableFile:
            lines = []
        result = results[path]
        result.findings = sorted(result.findings + apply_noqa(findings, lines), key=Finding.sort_key)
    return comparison


def summary_lines(comparison: Comparison) -> list[str]:
    """What the text summary adds: the notes, then removed and new sites."""
    lines = [f"baseline: note: {note}" for note in comparison.notes]
    lines += [f"baseline: removed site {key.label()}" for key in comparison.removed]
    lines += [f"baseline: new site {key.label()}" for key in comparison.new]
    lines.append(f"baseline: {len(comparison.regressions)} site(s) grew, {len(comparison.new)} new, "
                 f"{len(comparison.removed)} removed")
    return lines
