"""How many call sites a run could cost, and which dims it lacked for the rest.

"All checks passed" with none of nine call sites costed is a false pass: the summary says how many
were costed, and a hint names the dims whose sizes are missing most often. Read from the report's
site records, so a result served from the cache counts the same as a fresh one.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

# site_costs' reason for a site whose operand shapes name dims without a declared size.
_UNBOUND = re.compile(r"^unbound dims: ([\w, ]+?) \(")
HINT_DIMS = 5


@dataclass
class Coverage:
    costed: int = 0
    total: int = 0
    missing_dims: Counter = field(default_factory=Counter)  # dim -> sites it left uncosted


def _costs(report):
    """(resolved, reason) of every call site: from the records of a cached result, else fresh."""
    for result in report.results:
        if result.site_records is not None:
            yield from ((record.get("resolved"), record.get("reason")) for record in result.site_records)
        else:
            yield from ((site.cost.resolved, site.cost.reason) for site in result.sites)


def site_coverage(report) -> Coverage:
    coverage = Coverage()
    for resolved, reason in _costs(report):
        coverage.total += 1
        if resolved:
            coverage.costed += 1
            continue
        match = _UNBOUND.match(reason or "")
        if match:
            coverage.missing_dims.update(name.strip() for name in match.group(1).split(",") if name.strip())
    return coverage


def coverage_hint(coverage: Coverage) -> str | None:
    """One line when some sites were not costed, naming the most common missing dims."""
    uncosted = coverage.total - coverage.costed
    if uncosted <= 0:
        return None
    sites = "call site" if uncosted == 1 else "call sites"
    if coverage.missing_dims:
        common = sorted(coverage.missing_dims.items(), key=lambda item: (-item[1], item[0]))[:HINT_DIMS]
        names = ", ".join(f"{name} ({count})" for name, count in common)
        return (f"hint: {uncosted} {sites} not costed; sizes missing most often: {names}; "
                "`tensorcost init` writes a tensorcost.yaml listing the dims your code names")
    return (f"hint: {uncosted} {sites} not costed (`--format json` gives each reason); "
            "`tensorcost init` writes a tensorcost.yaml listing the dims your code names")
