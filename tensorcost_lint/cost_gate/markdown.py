"""`check --baseline --format markdown`: the pull-request comment (a GitHub job summary).

The configured models' changed totals first (one row per model and cost), then one row per
changed cost of a site, biggest change first (by the ratio away from 1, growth before
an equal shrink), units in every cell; then the TCL601 findings, the new and removed sites and
the notes.
"""

from __future__ import annotations

from fractions import Fraction

from ..baseline.compare import Comparison
from ..baseline.wording import METRIC_NAMES, format_ratio, format_value


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return "`" + _cell(text).replace("`", "'") + "`"


def _site(key) -> str:
    suffix = f" #{key.occurrence + 1}" if key.occurrence else ""
    model = getattr(key, "model", None)
    if model is not None:  # a site reached from a model: where it ran
        suffix += f" in model {_code(model)} at {_cell(key.module or '(root)')}"
    return f"{_cell(key.path)} {_cell(key.qualname)} {_code(key.expression)}{suffix}"


def _order(row) -> tuple:
    """Costs that appeared from zero first, then by how far the ratio is from 1; growth first."""
    key, change = row
    ratio = change.ratio
    label = key.label() if hasattr(key, "label") else str(key)  # site keys and model keys sort by their label
    if ratio is None:
        return (0, 0, False, label, change.metric)
    size = max(ratio, 1 / ratio) if ratio else Fraction(10**30)
    return (1, -size, ratio < 1, label, change.metric)


def render_markdown(comparison: Comparison, findings: list) -> str:
    out = ["## tensorcost cost gate", ""]
    out += [f"> **Note:** {note}" for note in comparison.notes]
    if comparison.notes:
        out.append("")
    grown = sum(1 for f in findings if f.code == "TCL601")
    models = comparison.model_changes or comparison.model_regressions or comparison.new_models or comparison.removed_models
    grown_models = f"{len(comparison.model_regressions)} model(s) and " if models else ""
    out.append(f"{grown_models}{grown} site(s) grew past `budgets.regression`, {len(comparison.changes)} cost(s) changed, "
               f"{len(comparison.new)} new site(s), {len(comparison.removed)} removed.")
    out.append("")
    if comparison.model_changes:  # models first: what the whole forward (and backward) costs
        out += ["| model | cost | before | after | ratio |", "|---|---|---:|---:|---:|"]
        for name, change in sorted(comparison.model_changes, key=_order):
            out.append(f"| {_code(name)} | {METRIC_NAMES[change.metric]} | {format_value(change.metric, change.before)} "
                       f"| {format_value(change.metric, change.after)} | {format_ratio(change.ratio)} |")
        out.append("")
    for title, names in (("New models", comparison.new_models), ("Removed models", comparison.removed_models)):
        if names:
            out += [f"### {title}", ""] + [f"- {_code(name)}" for name in names] + [""]
    if comparison.changes:
        out += ["| site | cost | before | after | ratio |", "|---|---|---:|---:|---:|"]
        for key, change in sorted(comparison.changes, key=_order):
            out.append(f"| {_site(key)} | {METRIC_NAMES[change.metric]} | {format_value(change.metric, change.before)} "
                       f"| {format_value(change.metric, change.after)} | {format_ratio(change.ratio)} |")
        out.append("")
    if findings:
        out += ["### Findings", ""]
        out += [f"- `{_cell(f.path)}:{f.line}:{f.column}` **{f.code}** {_cell(f.message)}" for f in findings]
        out.append("")
    for title, keys in (("New sites", comparison.new), ("Removed sites", comparison.removed)):
        if keys:
            out += [f"### {title}", ""] + [f"- {_site(key)}" for key in keys] + [""]
    return "\n".join(out)
