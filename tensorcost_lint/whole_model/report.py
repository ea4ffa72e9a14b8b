"""A whole-model result as Contract 7 JSON, or as text: a module tree like FlopCounterMode's table
(module path, class, executions, FLOPs, bytes, bound), then totals and unresolved sites."""

from __future__ import annotations

import os
from decimal import Decimal

from estimator.units import round_fixed

from ..formats.printable import printable


def _relative(path: str, root) -> str:
    try:
        relative = os.path.relpath(path, root)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative.replace(os.sep, "/")


def site_rows(result) -> list[dict]:
    """One row per site and context (module path); calls that repeat a context add executions."""
    merged: dict = {}
    for row in result.totals.rows:
        entry = row.entry
        key = (id(entry.site), entry.module, row.reason is None, row.alternative)
        line, column, _, _ = entry.site.span.position
        current = merged.get(key)
        if current is None:
            merged[key] = {
                "path": _relative(entry.site.span._unit.settings.path, result.root) if entry.site.span._unit else "",
                "line": line, "column": column, "expression": entry.site.expression, "module": entry.module,
                "executions": row.executions, "flops": row.flops, "resolved": row.reason is None, "reason": row.reason,
                "alternative": row.alternative,
            }
        else:
            for name, value in (("executions", row.executions), ("flops", row.flops)):
                current[name] = None if current[name] is None or value is None else current[name] + value
    return list(merged.values())


def _seconds(value):
    return None if value is None else float(value)


def model_json(result, hardware_id: str) -> dict:
    part = result.totals.part
    training = result.entry.mode == "training"
    rows = site_rows(result)
    return {
        "name": result.entry.name, "entry": result.entry.entry, "mode": result.entry.mode, "hardware": hardware_id,
        "totals": {
            "flops": part.total(1), "forward_flops": part.forward[1], "backward_flops": part.backward[1],
            "flops_range": [part.total(0), part.total(1)], "traffic_bytes": part.traffic[1],
            "peak_retained_bytes": result.retention.peak_bytes if result.retention is not None else None,
            # the backward has no bound of its own yet: a training bound would be a guess
            "lower_bound_seconds": None if training else _seconds(part.seconds[1]),
        },
        "undecided": list(result.undecided),
        "unresolved_sites": sum(1 for row in rows if not row["resolved"]),
        # an addition to Contract 7: the module tree, each with its inclusive FLOPs and retained bytes
        "modules": module_rows(result, rows),
        "sites": rows,
        # an addition to Contract 7: calls that may run a module but were not followed (cost unknown)
        "not_followed": [{"path": _relative(path, result.root), "line": line, "column": column,
                          "expression": expression, "reason": reason}
                         for path, line, column, expression, reason in result.not_followed],
    }


def _inclusive(result, rows) -> dict:
    """module path -> (FLOPs, bytes) of its resolved sites and its submodules'."""
    sums: dict = {}
    for row in rows:
        if not row["resolved"] or row["alternative"]:
            continue
        module = row["module"]
        prefixes = [""] + [module[:i] for i, c in enumerate(module) if c == "."] + ([module] if module else [])
        for prefix in dict.fromkeys(prefixes):
            flops, traffic = sums.get(prefix, (0, 0))
            sums[prefix] = (flops + row["flops"], traffic)
    return sums


def module_rows(result, rows) -> list[dict]:
    """The module tree in order (parents first): executions of its forward, and its FLOPs and
    retained bytes including its submodules'."""
    sums = _inclusive(result, rows)
    kept = result.retention.by_module if result.retention is not None else {}
    paths = sorted(set(result.classes) | set(result.totals.visits), key=lambda p: (p.split(".") if p else []))
    return [{"path": path, "class": result.classes.get(path, ""), "executions": result.totals.visits.get(path),
             "flops": sums.get(path, (0, 0))[0], "retained_bytes": kept.get(path, 0)} for path in paths]


def _or_dash(value) -> str:
    return "-" if value is None else str(value)


def model_text(result, hardware_id: str) -> str:
    data = model_json(result, hardware_id)
    totals, rows = data["totals"], data["sites"]
    lines = [f"model {data['name']} ({data['mode']}) {data['entry']} on {hardware_id}"]
    table = [("module", "class", "executions", "FLOPs", "retained_bytes")]
    for module in data["modules"]:
        path = module["path"]
        indent = "  " * (path.count(".") + (1 if path else 0))
        executions = result.totals.visits.get(path, "-")
        table.append((indent + (path.rsplit(".", 1)[-1] if path else "(root)"), module["class"],
                      "-" if executions is None else str(executions), str(module["flops"]),
                      str(module["retained_bytes"])))
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    for row in table:
        lines.append(f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}  {row[3]:>{widths[3]}}"
                     f"  {row[4]:>{widths[4]}}")
    bound = totals["lower_bound_seconds"]
    bound_text = "-" if bound is None else round_fixed(Decimal(repr(bound)) * 10**6, 3) + " us"
    lines.append(f"totals: flops={totals['flops']} forward_flops={totals['forward_flops']} "
                 f"backward_flops={totals['backward_flops']} flops_range=[{totals['flops_range'][0]}, "
                 f"{totals['flops_range'][1]}] traffic_bytes={totals['traffic_bytes']} "
                 f"peak_retained_bytes={_or_dash(totals['peak_retained_bytes'])} "
                 f"lower_bound={bound_text}")
    if data["undecided"]:
        lines.append("undecided: " + "; ".join(data["undecided"]))
    lines.append(f"unresolved sites: {data['unresolved_sites']}")
    for row in rows:
        if not row["resolved"]:
            lines.append(f"  {row['path']}:{row['line']}:{row['column']}: {row['expression']}: {row['reason']}")
    if data["not_followed"]:
        lines.append(f"calls not followed (their cost is unknown): {len(data['not_followed'])}")
        for call in data["not_followed"]:
            lines.append(f"  {call['path']}:{call['line']}:{call['column']}: {call['expression']}: {call['reason']}")
    for what, reason in result.problems:
        lines.append(f"  not followed: {what}: {reason}")
    return "\n".join(printable(line) for line in lines)  # names and code from the repository, escaped
