"""The models of `check` merged into its report (Contract 7: "sites reached from an entry are costed
and linted in that context").

How a reached site is reported, per checked file:
- a context whose shapes and costs equal the per-file analysis's for that site adds nothing but a
  `contexts` entry on the per-file site record (no second record, no repeated finding);
- any other context (the per-file analysis could not cost the site, or costs it with other shapes)
  is one more site record with its `contexts`, once per distinct shape context (executions summed
  over the module paths that ran it, across models), and the site rules' findings in that context,
  each message ending with where it was reached;
- a model's entry line carries its TCL503 finding (budgets), and TCL900 if the run failed.
Only files that `check` was given are reported; the flake8 plugin (one file) runs no model.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..driver.engine import apply_noqa
from ..safe_io.files import UnreadableFile, read_source
from ..rules.findings import Finding
from ..rules.selection import enabled_codes
from ..rules import RULES_BY_CODE
from .in_check import ModelOutcome, run_model
from ..whole_model.values.memory_facts import over_device_memory
from ..whole_model.values.model_facts import over_budget
from ..whole_model.values.source_error import SourceError


@dataclass
class ModelsInCheck:
    """What `check` learned from the configured models, for the formats and the gate."""

    outcomes: list = field(default_factory=list)  # (config, ModelOutcome)
    contexts: dict = field(default_factory=dict)  # (result path, per-file site id) -> [context]
    records: dict = field(default_factory=dict)  # result path -> [site record with "contexts"]
    notes: list = field(default_factory=list)  # budgets that could not be checked, failed runs

    counts: list = field(default_factory=list)  # (ModelOutcome, contexts in the checked files)

    def summary_lines(self) -> list[str]:
        """One line per model (its total and how many site contexts it put in the report), then notes."""
        from estimator.units import format_flops

        lines = [f"models: `{outcome.name}` ({outcome.mode}): {format_flops(outcome.totals['flops'])} in total"
                 f"{_partial(outcome.totals)}, {count} site context(s) in the files checked"
                 for outcome, count in self.counts if outcome.error is None]
        return lines + [f"models: note: {note}" for note in self.notes]


def _partial(totals: dict) -> str:
    """` (partial: N unresolved, M not followed)` as `tensorcost model` says it (Contract 7a): a total
    cut by a limit, an unread call or a lost shape never reads as the whole model's."""
    if totals.get("complete", 1):
        return ""
    return f" (partial: {totals.get('unresolved_sites')} unresolved, {totals.get('not_followed')} not followed)"


def configured_models(report, resolver) -> list:
    """(config, ModelEntry) for every model of the configs of the checked files, each once."""
    seen, models = set(), []
    for result in report.results:
        config = resolver.for_path(result.path)
        for entry in config.models:
            key = (config.source, entry.name)
            if key not in seen:
                seen.add(key)
                models.append((config, entry))
    return models


def run_models(report, resolver, cache=None) -> list:
    """(config, ModelOutcome) per configured model; SourceError (an entry that cannot be read) is
    a config error, exit 2, as for `tensorcost model`."""
    from ..config.errors import ConfigError

    outcomes = []
    for config, entry in configured_models(report, resolver):
        outcome = cache.get(entry, config) if cache is not None else None
        if outcome is None:
            try:
                outcome = run_model(entry, config)
            except SourceError as error:
                key = getattr(error, "key", "entry")  # build_entry.BuildError: the `build` key
                raise ConfigError(config.source, f"models.{entry.name}.{key}", str(error)) from None
            if cache is not None and outcome.error is None:
                cache.put(entry, config, outcome)
        outcomes.append((config, outcome))
    return outcomes


def _where(context: dict) -> str:
    modules = ", ".join(m or "(root)" for m in context["modules"][:3])
    if len(context["modules"]) > 3:
        modules += f", … ({len(context['modules'])} modules)"
    executions = context["executions"]
    runs = "executions unknown" if executions is None else f"{executions} execution{'s' if executions != 1 else ''}"
    return f"model `{context['model']}` at {modules}, {runs}"


def _shape_key(record: dict) -> str:
    from .in_check import ContextSite

    return ContextSite("", 0, 0, record, {}).shape_key()


def merge(report, resolver, outcomes: list) -> ModelsInCheck:
    try:
        return _merge(report, resolver, outcomes)
    except Exception as error:  # noqa: BLE001 - check never crashes on our account; the summary says why
        return ModelsInCheck(notes=[f"the models' results could not be reported: {type(error).__name__}: {error}"])


def _merge(report, resolver, outcomes: list) -> ModelsInCheck:
    merged = ModelsInCheck(outcomes)
    by_real = {os.path.realpath(result.path): result for result in report.results}
    reached: dict = {}  # result path -> [ContextSite]
    for _, outcome in outcomes:
        count = 0
        for site in outcome.sites:
            result = by_real.get(os.path.realpath(site.path))
            if result is not None:
                reached.setdefault(result.path, []).append(site)
                count += 1
        merged.counts.append((outcome, count))
    added: dict = {}  # result path -> [Finding]
    for result in report.results:
        sites = reached.get(result.path)
        if sites:
            added[result.path] = _merge_file(result, resolver.for_path(result.path), sites, merged)
    for config, outcome in outcomes:
        _model_findings(config, outcome, by_real, added, merged)
    for path, findings in added.items():
        if not findings:
            continue
        try:
            lines = read_source(path).splitlines()
        except UnreadableFile:
            lines = []
        result = next(r for r in report.results if r.path == path)
        known = {(f.line, f.column, f.code, f.message) for f in result.findings}
        fresh = [f for f in apply_noqa(findings, lines) if (f.line, f.column, f.code, f.message) not in known]
        result.findings = sorted(result.findings + fresh, key=Finding.sort_key)
    return merged


def _merge_file(result, config, sites: list, merged: ModelsInCheck) -> list:
    own = result.records()
    by_position: dict = {}
    for record in own:
        by_position.setdefault((record["line"], record["column"]), []).append(record)
    codes = enabled_codes(config.select, config.extend_select, config.ignore_for(result.path))
    existing = {(f.line, f.column, f.code, f.message) for f in result.findings}
    extra: dict = {}  # (line, column, shape key) -> record
    next_id = max((record["id"] for record in own), default=-1) + 1
    findings = []
    for site in sites:
        key = site.shape_key()
        same = [r for r in by_position.get((site.line, site.column), []) if _shape_key(r) == key]
        if same:  # costed identically by the per-file analysis: only say where it was reached
            merged.contexts.setdefault((result.path, same[0]["id"]), []).append(site.context)
            continue
        record = extra.get((site.line, site.column, key))
        if record is not None:
            record["contexts"].append(site.context)
            continue
        record = extra[(site.line, site.column, key)] = {**site.record, "id": next_id, "path": result.path,
                                                         "contexts": [site.context]}
        next_id += 1
        for found in site.findings:
            if found["code"] not in codes or (found["line"], found["column"], found["code"], found["message"]) in existing:
                continue
            findings.append(Finding(result.path, found["line"], found["column"], found["code"], found["severity"],
                                    f"{found['message']} (reached from {_where(site.context)})", record["id"],
                                    found["end_line"], found["end_column"]))
    if extra:
        merged.records[result.path] = sorted(extra.values(), key=lambda r: r["id"])
    return findings


def _model_findings(config, outcome: ModelOutcome, by_real: dict, added: dict, merged: ModelsInCheck) -> None:
    result = by_real.get(os.path.realpath(outcome.entry_path))
    if outcome.error is not None:
        merged.notes.append(f"model `{outcome.name}` could not be analysed: {outcome.error}")
        if result is not None and "TCL900" in enabled_codes(config.select, config.extend_select,
                                                            config.ignore_for(result.path)):
            line, column = outcome.definition or (1, 1)
            added.setdefault(result.path, []).append(RULES_BY_CODE["TCL900"].report(
                result.path, line, column, f"internal error while analysing model `{outcome.name}`: {outcome.error}; "
                                           "please report it"))
        return
    _device_memory(config, outcome, result, added)
    fact, unchecked = over_budget(outcome.name, outcome.mode, outcome.totals, outcome.budgets)
    for key in unchecked:
        why = {"retained_bytes": "the peak retained bytes are not known (`tensorcost model` says why)",
               "latency_seconds": "the model has no lower bound (training, or a site without hardware evidence)",
               "flops": "the total FLOPs are not known"}[key]
        merged.notes.append(f"model `{outcome.name}`: budgets.{key} not checked: {why}")
    if fact is None or result is None or outcome.definition is None:
        return
    if "TCL503" not in enabled_codes(config.select, config.extend_select, config.ignore_for(result.path)):
        return
    rule = RULES_BY_CODE["TCL503"]
    line, column = outcome.definition
    added.setdefault(result.path, []).append(rule.report(result.path, line, column, rule.message(fact, {})))


def _device_memory(config, outcome: ModelOutcome, result, added: dict) -> None:
    """TCL504 at the entry's `def` line when the model needs more memory than the device has."""
    if result is None or outcome.definition is None:
        return
    if "TCL504" not in enabled_codes(config.select, config.extend_select, config.ignore_for(result.path)):
        return
    try:
        device = config.hardware
    except Exception:  # noqa: BLE001 - an unknown profile is the config's error, reported elsewhere
        return
    fact = over_device_memory(outcome.name, outcome.mode, outcome.totals, device.id, device.memory_bytes)
    if fact is not None:
        rule = RULES_BY_CODE["TCL504"]
        line, column = outcome.definition
        added.setdefault(result.path, []).append(rule.report(result.path, line, column, rule.message(fact, {})))

