"""The language server's view of configured models (Contract 7): a site reached from a model shows,
in its hover, its cost in each shape context and how many times it runs there.

Models are analysed from the files on disk (an unsaved edit reaches them when saved), at most once
per set of file contents: an outcome is kept while every file its run read, and the listing of
their directories, are unchanged (the same check as the `check` cache, in memory). A context is
shown only on the site whose position and expression it was recorded at, so a stale position
never lends its numbers to another call.
"""

from __future__ import annotations

import os

from estimator.units import format_bytes, format_flops

from ..model_check.in_check import run_model
from ..model_check.model_cache import _dependencies

MAX_ROWS = 12


class ModelContexts:
    def __init__(self) -> None:
        self._outcomes: dict = {}  # (config fingerprint, entry) -> (dependencies, ModelOutcome)

    def _outcome(self, entry, config):
        key = (config.fingerprint_text, repr(entry))
        known = self._outcomes.get(key)
        if known is not None and known[0] == _dependencies(known[1].files):
            return known[1]
        try:
            outcome = run_model(entry, config)
        except Exception:  # noqa: BLE001 - an entry that cannot be read shows no contexts; `check` says why
            return None
        self._outcomes[key] = (_dependencies(outcome.files), outcome)
        return outcome

    def sites_in(self, path: str, config) -> list:
        """The ContextSites of every configured model that lie in `path`."""
        if config is None or not config.models:
            return []
        real = os.path.realpath(path)
        found = []
        for entry in config.models:
            outcome = self._outcome(entry, config)
            if outcome is not None and outcome.error is None:
                found += [site for site in outcome.sites if os.path.realpath(site.path) == real]
        return found


def _shape(operand) -> str:
    shape = operand.get("shape") if operand else None
    return "?" if shape is None else "[" + ", ".join(str(d) for d in shape) + "]"


def contexts_markdown(site, contexts: list) -> str:
    """A table of the site's contexts, or "" when none is recorded at this site."""
    here = [c for c in contexts if (c.line, c.column) == (site.line, site.column)
            and c.record.get("expression") == site.expression]
    if not here:
        return ""
    rows = ["**Reached from models** (cost per execution × executions):", "",
            "| model | module | shapes | FLOPs per execution | executions | FLOPs | output |",
            "|---|---|---|---:|---:|---:|---:|"]
    for context in here[:MAX_ROWS]:
        record, where = context.record, context.context
        shapes = " × ".join(_shape(o) for o in record["operands"]) + " → " + _shape(record["output"])
        modules = ", ".join(f"`{m or '(root)'}`" for m in where["modules"])
        executions = where["executions"]
        if record["resolved"]:
            per = format_flops(record["flops"])
            total = format_flops(record["flops"] * executions) if executions is not None else "unknown"
            output = format_bytes(record["output_bytes"])
        else:
            per = total = output = "not costed: " + (record["reason"] or "").replace("|", "\\|")
        rows.append(f"| `{where['model']}` | {modules} | `{shapes}` | {per} | "
                    f"{'unknown' if executions is None else executions} | {total} | {output} |")
    if len(here) > MAX_ROWS:
        rows.append(f"| … | {len(here) - MAX_ROWS} more context(s) | | | | | |")
    return "\n".join(rows)
