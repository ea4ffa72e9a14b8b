"""The memory block of `tensorcost model`'s text (Contract 9): one line per category under the
totals, exact bytes with a readable size beside them, the formula in the dims, and for a category
that is not known, why."""

from __future__ import annotations

from estimator.units import format_bytes

from ..memory.memory_totals import CATEGORIES


MAX_REASON = 150


def memory_lines(memory: dict | None) -> list[str]:
    if memory is None:
        return ["memory: not computed (see the problems below)"]
    lines = ["memory:"]
    width = max(len(name) for name in CATEGORIES + ("peak_lower_bound",))
    unknown = memory.get("unknown", {})
    formulas = memory.get("memory_formulas", {})
    for name in CATEGORIES:
        value = memory.get(name)
        if value is None:  # the reason shortened to a line; `--format json` has it whole
            reason = unknown.get(name, "not known")
            reason = reason if len(reason) <= MAX_REASON else reason[:MAX_REASON - 1] + "…"
            lines.append(f"  {name:<{width}}  -  ({reason})")
            continue
        formula = formulas.get(name)
        shown = f"  {name:<{width}}  {value} B ({format_bytes(value)})"
        if name == "peak" and memory.get("peak_phase"):
            shown += f" during {memory['peak_phase']}"
        lines.append(shown + (f"  = {formula}" if formula and formula != str(value) else ""))
    bound = memory.get("peak_lower_bound")
    if memory.get("peak") is None and bound is not None:
        lines.append(f"  {'peak_lower_bound':<{width}}  {bound} B ({format_bytes(bound)})  the step holds at "
                     "least this at one moment")
    return lines
