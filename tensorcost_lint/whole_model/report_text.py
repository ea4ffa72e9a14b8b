"""A whole-model result as text for people: a module tree like FlopCounterMode's table (module
path, class, executions, FLOPs, retained bytes), the totals, then what the totals leave out — one
line per undecided condition (most FLOPs at stake first), per unresolved site and per call not
followed, each list headed by its count.

A call expression can span a screen (a 600-character `self.attn(...)` with comments inside), so
lines show the callee and its location (`self.attn(…)` at model.py:67:21); `--format json` keeps
the whole expression."""

from __future__ import annotations

import ast
import re
from decimal import Decimal

from estimator.units import round_fixed

from .report import model_json

SHORT_EXPRESSION = 60  # characters: longer expressions are shown by their callee


_CALLEE = re.compile(r"\s*([A-Za-z_][\w.]*(?:\[[^\]\n]*\][\w.]*)*)\s*\(")


def _parsed(text: str):
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def callee(text: str) -> str | None:
    """`self.attn` of `self.attn(x, ...)`; None when the expression is no call. Expression text
    from the analysis is flattened onto one line, so a comment inside a call swallows the rest of
    it and the text no longer parses: the callee is then read from the start of the text."""
    node = _parsed(text)
    if node is not None:
        return ast.unparse(node.func) if isinstance(node, ast.Call) else None
    match = _CALLEE.match(text)
    return match.group(1) if match else None


def short_expression(text: str, limit: int = SHORT_EXPRESSION) -> str:
    """`self.attn(x, mask=m)` as itself when short, else `self.attn(…)`; comments and line breaks
    never reach the line."""
    node = _parsed(text)
    flat = ast.unparse(node) if node is not None else " ".join(text.split())
    if len(flat) <= limit and (node is not None or "#" not in flat):
        return flat
    name = callee(text)
    if name is not None:
        return (name if len(name) <= limit else name[:limit - 4] + "…") + "(…)"
    flat = flat.split(" #", 1)[0]
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _or_dash(value) -> str:
    return "-" if value is None else str(value)


def _module_table(result, data) -> list[str]:
    table = [("module", "class", "executions", "FLOPs", "retained_bytes")]
    for module in data["modules"]:
        path = module["path"]
        indent = "  " * (path.count(".") + (1 if path else 0))
        executions = result.totals.visits.get(path, "-")
        table.append((indent + (path.rsplit(".", 1)[-1] if path else "(root)"), module["class"],
                      "-" if executions is None else str(executions), str(module["flops"]),
                      str(module["retained_bytes"])))
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    return [f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}  {row[3]:>{widths[3]}}"
            f"  {row[4]:>{widths[4]}}" for row in table]


def _totals_line(totals) -> str:
    bound = totals["lower_bound_seconds"]
    bound_text = "-" if bound is None else round_fixed(Decimal(repr(bound)) * 10**6, 3) + " us"
    return (f"totals: flops={totals['flops']} forward_flops={totals['forward_flops']} "
            f"backward_flops={totals['backward_flops']} flops_range=[{totals['flops_range'][0]}, "
            f"{totals['flops_range'][1]}] traffic_bytes={totals['traffic_bytes']} "
            f"peak_retained_bytes={_or_dash(totals['peak_retained_bytes'])} lower_bound={bound_text}")


def undecided_lines(conditions: list, at_stake: dict) -> list[str]:
    """One line per condition, the most FLOPs between its sides first (conditions that choose no
    costed work last, in the order met)."""
    if not conditions:
        return []
    order = sorted(range(len(conditions)), key=lambda i: (-at_stake.get(conditions[i], 0), i))
    lines = [f"undecided: {len(conditions)} (each side costed; `assume` decides one)"]
    for index in order:
        condition = conditions[index]
        stake = at_stake.get(condition, 0)
        what = f"{stake} FLOPs between its sides" if stake else "no FLOPs between its sides"
        lines.append(f"  {short_expression(condition)}: {what}")
    return lines


def _location(row) -> str:
    return f"{row['path']}:{row['line']}:{row['column']}"


def unresolved_lines(rows: list) -> list[str]:
    unresolved = [row for row in rows if not row["resolved"]]
    lines = [f"unresolved sites: {len(unresolved)}"]
    lines += [f"  {_location(row)}: {short_expression(row['expression'])}: {row['reason']}" for row in unresolved]
    return lines


def not_followed_lines(calls: list) -> list[str]:
    """One line per callee that was not followed: the same callee for the same reason at several
    places is one line with its count (most places first), since each place is one unknown cost."""
    if not calls:
        return []
    groups: dict = {}
    for call in calls:
        key = (callee(call["expression"]) or short_expression(call["expression"]), call["reason"])
        groups.setdefault(key, []).append(call)
    lines = [f"calls not followed (their cost is unknown): {len(calls)}"]
    for (name, reason), places in sorted(groups.items(), key=lambda item: -len(item[1])):
        if len(places) == 1:
            lines.append(f"  {_location(places[0])}: {short_expression(places[0]['expression'])}: {reason}")
        else:
            lines.append(f"  {_location(places[0])}: {name}(…) ×{len(places)} (the first place shown): {reason}")
    return lines


def model_text(result, hardware_id: str) -> str:
    data = model_json(result, hardware_id)
    lines = [f"model {data['name']} ({data['mode']}) {data['entry']} on {hardware_id}"]
    lines += _module_table(result, data)
    lines.append(_totals_line(data["totals"]))
    lines += undecided_lines(data["undecided"], result.totals.at_stake)
    lines += unresolved_lines(data["sites"])
    lines += not_followed_lines(data["not_followed"])
    for what, reason in result.problems:
        lines.append(f"  not followed: {what}: {reason}")
    return "\n".join(lines)
