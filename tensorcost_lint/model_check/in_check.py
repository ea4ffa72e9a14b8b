"""Configured models inside `tensorcost check` (Contract 7): each model run once, its reached
sites costed and linted in their context, as plain data (JSON-able, so a run can be cached).

A site reached from a model has one *context* per distinct shape it is reached with: the model, the
module paths that ran it, and its executions (a block inside `for block in self.h` over 12 layers:
12). Sites in one function reached with two shapes are two contexts; reached twice with the same
shapes, one context whose executions add up. `check_merge` puts these into the report.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from ..analysis.source_parse import parse_source
from ..safe_io.bounded_read import read_capped
from ..safe_io.files import MAX_SOURCE_BYTES
from ..rules import ALL_RULES, RuleContext, SiteResult, describe
from ..costing.site_costs import cost_site
from ..whole_model.report.analyse import analyse_model
from ..whole_model.values.memory_facts import memory_totals_of
from ..whole_model.values.objects import SiteEntry
from ..whole_model.report.report import model_json
from ..whole_model.values.source_error import SourceError

# Rules that judge one site in one context; the gate's, the model budget's and the internal error's
# findings are made elsewhere.
_CONTEXT_RULES = tuple(rule for rule in ALL_RULES if rule.code not in ("TCL503", "TCL504", "TCL601", "TCL602", "TCL900"))
TOTAL_METRICS = ("flops", "forward_flops", "backward_flops", "traffic_bytes", "peak_retained_bytes",
                 "lower_bound_seconds")


@dataclass
class ContextSite:
    """One site in one shape context of one model: its Contract 6 record (per execution), where it
    ran, and the findings the site rules give it there."""

    path: str  # absolute, as the model run read the file
    line: int
    column: int
    record: dict  # site_record without id and path
    context: dict  # {"model", "modules", "executions"}
    findings: list = field(default_factory=list)  # {"code", "severity", "line", "column", "end_line", "end_column", "message"}

    def shape_key(self) -> str:
        """What makes two contexts of one site the same: operands, output and cost."""
        record = self.record
        return json.dumps([record["operands"], record["output"], record["resolved"], record["flops"],
                           record["traffic_bytes"]], sort_keys=True, default=str)


@dataclass
class ModelOutcome:
    name: str
    entry: str  # FILE:QUALNAME as configured
    entry_path: str  # absolute
    mode: str
    definition: tuple | None  # (line, column) of the entry's `def`, 1-based
    totals: dict  # TOTAL_METRICS: exact ints; lower_bound_seconds an exact decimal string; None when unknown
    budgets: dict
    sites: list = field(default_factory=list)  # ContextSite
    files: list = field(default_factory=list)  # absolute paths of every file the run read
    error: str | None = None  # the run failed: why (one line)


def definition_position(path: str, qualname: str) -> tuple | None:
    """(line, column) of the `def` (or `class`) that `qualname` names in the file, 1-based."""
    try:
        # bounded and regular files only: an entry on a FIFO or /dev/zero must not hang or fill memory
        tree = parse_source(read_capped(path, MAX_SOURCE_BYTES).decode("utf-8-sig"))  # a long file in pieces
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body, found = tree.body, None
    for part in qualname.split("."):
        found = next((node for node in reversed(body) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                          ast.ClassDef)) and node.name == part), None)
        if found is None:
            return None
        body = found.body
    if isinstance(found, ast.ClassDef) and qualname.count(".") == 0:
        method = next((n for n in reversed(found.body) if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
        found = method or found
    return found.lineno, found.col_offset + 1


def _totals(result, hardware_id: str) -> dict:
    """The exact totals: counts from the run; peak retained bytes read from the totals record when
    the analysis provides it (None otherwise); the bound as an exact decimal (None in training)."""
    part = result.totals.part
    data = model_json(result, hardware_id)
    published = data["totals"]
    retained = published.get("peak_retained_bytes")
    seconds = part.seconds[1] if result.entry.mode != "training" else None
    return {"flops": part.total(1), "forward_flops": part.forward[1], "backward_flops": part.backward[1],
            "traffic_bytes": part.traffic[1], "peak_retained_bytes": retained if type(retained) is int else None,
            "lower_bound_seconds": None if seconds is None else str(Decimal(seconds)),
            # Contract 7a's completeness, so `check`'s summary says a total is partial (issue 22)
            "complete": int(data["complete"]), "unresolved_sites": data["unresolved_sites"],
            "not_followed": len(data["not_followed"]) + len(result.calls_not_costed),
            **memory_totals_of(published.get("memory"))}  # TCL504 (Contract 9)


def _site_path(site) -> str | None:
    unit = getattr(site.span, "_unit", None) if site.span is not None else None
    return None if unit is None else unit.settings.path


def _context_sites(result, sizes: dict, config) -> list:
    from ..formats.site_records import site_record
    from ..driver.lint_settings import lint_settings

    groups: dict = {}  # (path, line, column, shapes) -> ContextSite
    costed: dict = {}  # id(site) -> (ContextSite template, SiteResult)
    for row in result.totals.rows:
        if type(row.entry) is not SiteEntry:
            continue  # a matmul only the backward runs (BackwardMatmul): no site of the file's code
        site = row.entry.site
        path = _site_path(site)
        if path is None:
            continue
        if id(site) not in costed:
            settings = lint_settings(config, path)  # what the per-file lint of `path` reads
            site_result = SiteResult(site, cost_site(site, sizes, settings, describe))
            record = site_record(0, path, site_result, settings)
            for key in ("id", "path"):
                record.pop(key)
            costed[id(site)] = (ContextSite(path, site.line, site.column, record, {}), site_result)
        template, site_result = costed[id(site)]
        key = (path, site.line, site.column, template.shape_key())
        current = groups.get(key)
        if current is None:
            current = groups[key] = ContextSite(path, site.line, site.column, template.record,
                                                {"model": result.entry.name, "modules": [], "executions": 0})
            current.findings = _findings(site_result, path, sizes, lint_settings(config, path))
        module = row.entry.module
        if module not in current.context["modules"]:
            current.context["modules"].append(module)
        known = current.context["executions"]
        current.context["executions"] = None if known is None or row.executions is None else known + row.executions
    return sorted(groups.values(), key=lambda s: (s.path, s.line, s.column, s.shape_key()))


def _findings(site_result, path: str, sizes: dict, settings) -> list:
    context = RuleContext(path, settings, sizes, [site_result], [])
    found = []
    for rule in _CONTEXT_RULES:
        try:
            findings = list(rule.check(context))
        except Exception:  # noqa: BLE001 - a rule failing on one context must not stop check
            continue
        for finding in findings:
            found.append({"code": finding.code, "severity": finding.severity, "line": finding.line,
                          "column": finding.column, "end_line": finding.end_line, "end_column": finding.end_column,
                          "message": finding.message})
    return found


def run_model(entry, config) -> ModelOutcome:
    """Analyse one configured model for `check`. A failure is kept as the outcome's error (check
    reports it), never raised."""
    outcome = ModelOutcome(entry.name, entry.entry, str(Path(entry.path).resolve()), entry.mode,
                           definition_position(entry.path, entry.qualname), {},
                           {key: str(value) if isinstance(value, Decimal) else value  # JSON-able, exact
                            for key, value in entry.budgets.items()})
    try:
        result = analyse_model(entry, config, dict(config.cli_dims))
        if entry.build is not None and result.entry_at is not None:  # Contract 7a: the built class's method
            outcome.entry_path, outcome.definition = result.entry_at[0], result.entry_at[1:]
        sizes = {**entry.dims, **config.dims, **config.cli_dims}
        outcome.totals = _totals(result, config.hardware_id)
        outcome.sites = _context_sites(result, sizes, config)
        outcome.files = list(result.files)
    except SourceError:
        raise  # the entry cannot be read: a config error (exit 2), as for `tensorcost model`
    except RecursionError:
        outcome.error = "too deep to analyse (recursion limit)"
    except Exception as error:  # noqa: BLE001 - check reports it as one line, never a traceback
        outcome.error = " ".join(f"{type(error).__name__}: {error}".split())[:300]
    return outcome
