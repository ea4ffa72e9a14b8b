"""A whole-model result as Contract 7 JSON (its text form, for people, is report_text.py)."""

from __future__ import annotations

import os

from ..values.installed_packages import packages_read
from ..values.objects import BackwardMatmul




def _relative(path: str, root) -> str:
    try:
        relative = os.path.relpath(path, root)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative.replace(os.sep, "/")


def site_rows(result) -> list[dict]:
    """One row per site and context (module path, and cost of one execution: the same code run
    with other shapes is its own row); calls that repeat a context add executions, whether they
    were recorded once and repeated or recorded per iteration (a loop run index by index)."""
    merged: dict = {}
    relative_paths: dict = {}  # a path's relpath once per report, not once per row (100,000 rows)

    def relative(path: str) -> str:
        known = relative_paths.get(path)
        if known is None:
            known = relative_paths[path] = _relative(path, result.root)
        return known

    for row in result.totals.rows:
        entry = row.entry
        path, line, column, expression = _where(entry)
        executions = row.executions
        once = None if row.flops is None or not executions else row.flops if executions == 1 \
            else row.flops // executions
        key = (path, line, column, expression, entry.module, row.reason is None, row.alternative, once)
        current = merged.get(key)
        if current is None:
            merged[key] = {
                "path": relative(path) if path is not None else "",
                "line": line, "column": column, "expression": expression, "module": entry.module,
                "executions": row.executions, "flops": row.flops, "resolved": row.reason is None, "reason": row.reason,
                "alternative": row.alternative,
            }
            if row.reason is not None:
                merged[key]["shape_lost_at"] = _lost_at(entry, row.reason, relative)
        else:
            for name, value in (("executions", row.executions), ("flops", row.flops)):
                current[name] = None if current[name] is None or value is None else current[name] + value
    return list(merged.values())


def _where(entry) -> tuple:
    """(path or None, line, column, expression) of a site's entry, or of a matmul only the backward
    runs (its call's)."""
    if type(entry) is BackwardMatmul:
        return (*entry.where, entry.expression)
    site = entry.site
    line, column, _, _ = site.span.position
    return site.span._unit.settings.path if site.span._unit else None, line, column, site.expression


def _lost_at(entry, reason: str, relative) -> dict:
    """Contract 7a: the first operation where the site's operand lost its shape; a site whose
    operands all have shapes (an undeclared dim, say) is itself where costing stopped."""
    if getattr(entry, "lost_at", None) is not None:
        return entry.lost_at.as_json(relative)
    path, line, _, expression = _where(entry)
    return {"path": relative(path or ""), "line": line, "expression": expression, "reason": reason}


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
            # an addition to Contract 7: the bound's seconds on sites bound by their memory traffic
            # (the rest by their FLOPs): decode is usually traffic-bound, and the bound says so
            "lower_bound_traffic_seconds": None if training or part.seconds[1] is None
            else _seconds(part.traffic_seconds[1]),
            # Contract 9: bytes by category (memory_totals)
            "memory": result.memory.as_json() if result.memory is not None else None,
        },
        "undecided": list(result.undecided),
        "unresolved_sites": sum(1 for row in rows if not row["resolved"]),
        # Contract 7a: the total is the runtime count exactly when nothing was left out and no
        # undecided condition moves it (`flops_range` of one value)
        "complete": not any(not row["resolved"] for row in rows) and not result.not_followed
        and not result.calls_not_costed and part.total(0) == part.total(1),
        # an addition to Contract 7: the module tree, each with its inclusive FLOPs and retained bytes
        "modules": module_rows(result, rows),
        "sites": rows,
        # an addition to Contract 7: calls that may run a module but were not followed (cost unknown)
        "not_followed": [{"path": _relative(path, result.root), "line": line, "column": column,
                          "expression": expression, "reason": reason}
                         for path, line, column, expression, reason in result.not_followed],
        # Contract 7a: dims given in `dims` or `--dim` that nothing in the run reads
        "warnings": list(result.warnings),
        # an addition to Contract 7a: unsized dims bound to the size a running program must give
        # them (an input's `d_in` contracted with a Linear's in_features), with where
        "unified_dims": [{"dim": u.name, "size": u.size, "from": u.what, "path": _relative(u.path, result.root),
                          "line": u.line, "expression": u.expression} for u in result.unified],
        # Contract 7a: installed packages whose source the run read, with their versions
        "packages_read": packages_read(result.files),
        # Contract 7a: the call that built the model, when the entry is a method of what it builds
        **({"build": result.entry.build} if result.entry.build is not None else {}),
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
    memory = result.memory.by_module if result.memory is not None else {}
    return [{"path": path, "class": result.classes.get(path, ""), "executions": result.totals.visits.get(path),
             "flops": sums.get(path, (0, 0))[0], "retained_bytes": kept.get(path, 0),
             # Contract 9: the module's parameter and saved-activation bytes, its submodules' included
             "memory": memory.get(path, {})} for path in paths]


def model_document(results, hardware_id: str) -> dict:
    """`tensorcost model --format json`: Contract 7's document over every model run
    (docs/schemas/model-report.schema.json)."""
    models = []
    for result in results:
        model = model_json(result, hardware_id)
        for site in model["sites"]:
            site.pop("alternative", None)  # the text report's, not the contract's
        models.append(model)
    return {"version": 1, "models": models}
