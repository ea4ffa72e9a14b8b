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

from ...safe_io.printable import printable
from .memory_report import memory_lines
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


def completeness(data: dict, result) -> str:
    """Contract 7a: `(complete)`, or `(partial: N unresolved, M not followed)`; undecided conditions
    that move the total are listed under it."""
    if data["complete"]:
        return "(complete)"
    not_followed = len(data["not_followed"]) + len(result.calls_not_costed)
    return f"(partial: {data['unresolved_sites']} unresolved, {not_followed} not followed)"


def _totals_line(data: dict, result) -> str:
    totals = data["totals"]
    bound = totals["lower_bound_seconds"]
    bound_text = "-" if bound is None else round_fixed(Decimal(repr(bound)) * 10**6, 3) + " us"
    return (f"totals {completeness(data, result)}: flops={totals['flops']} forward_flops={totals['forward_flops']} "
            f"backward_flops={totals['backward_flops']} flops_range=[{totals['flops_range'][0]}, "
            f"{totals['flops_range'][1]}] traffic_bytes={totals['traffic_bytes']} "
            f"peak_retained_bytes={_or_dash(totals['peak_retained_bytes'])} lower_bound={bound_text}")


def _bound_lines(data: dict) -> list[str]:
    """Serving: which resource the lower bound is made of (a decode step reads every weight and the
    whole cache for one token: its bound is memory traffic, and saying so is the point)."""
    totals = data["totals"]
    bound, traffic = totals["lower_bound_seconds"], totals.get("lower_bound_traffic_seconds")
    if data["mode"] not in ("prefill", "decode") or not bound or traffic is None:
        return []
    share = Decimal(repr(traffic)) / Decimal(repr(bound)) * 100
    limited = "traffic" if 2 * traffic >= bound else "compute"
    return [f"lower bound: {round_fixed(share, 1)}% of it on sites bound by memory traffic ({limited}-bound)"]


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


def lost_at_lines(rows: list) -> list[str]:
    """Where the unresolved sites' shapes were lost, the place that leaves most sites unresolved
    first: one fix there may resolve them all."""
    counts: dict = {}
    for row in rows:
        lost = row.get("shape_lost_at")
        if not row["resolved"] and lost is not None:
            key = (lost["path"], lost["line"], lost["expression"], lost["reason"])
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        return []
    lines = [f"shapes lost at: {len(counts)}"]
    for (path, line, expression, reason), count in sorted(counts.items(), key=lambda item: -item[1]):
        sites = "1 site" if count == 1 else f"{count} sites"
        lines.append(f"  {path}:{line}: {short_expression(expression)}: {reason} ({sites})")
    return lines


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
    # a build entry: `VisionTransformer(img_size=64, …).forward`, long calls by their callee
    entry = f"{short_expression(data['build'])}.{data['entry']}" if "build" in data else data["entry"]
    lines = [f"model {data['name']} ({data['mode']}) {entry} on {hardware_id}"]
    lines += _module_table(result, data)
    lines.append(_totals_line(data, result))
    lines += _bound_lines(data)
    lines += undecided_lines(data["undecided"], result.totals.at_stake)
    lines += lost_at_lines(data["sites"])
    lines += unresolved_lines(data["sites"])
    lines += not_followed_lines(data["not_followed"])
    for what, reason in result.problems:
        lines.append(f"  not followed: {what}: {reason}")
    lines.extend(memory_lines(data["totals"]["memory"]))  # last: the lines above keep their places
    lines += [f"warning: {warning}" for warning in data["warnings"]]
    lines += [f"dim unified: {u['dim']} = {u['size']}, from {u['from']} at {u['path']}:{u['line']} "
              f"({short_expression(u['expression'])})"
              for u in data["unified_dims"]]
    return "\n".join(printable(line) for line in lines)  # names and code from the repository, escaped
