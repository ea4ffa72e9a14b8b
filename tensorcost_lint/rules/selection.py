"""Which rule codes a run reports: `select` / `extend_select` / `ignore` as ruff reads them, and
the check that every selector names a real code or prefix.

Two traps shaped this module. A selector that matches nothing (`--select TCL999`, `FOO`) used to
switch the linter off silently and print "All checks passed"; ruff refuses it with exit 2, so do
we, suggesting the closest real code. And a prefix (`--select TCL`, `extend-select = TCL5`) used
to turn on the default-off ledger, one info line per call site: default-off codes are enabled
only when named exactly.
"""

from __future__ import annotations

import difflib

from ..config.errors import ConfigError
from . import ALL_RULES

RULE_PREFIX = "TCL"
ALL_SELECTOR = "ALL"
RULE_CODES = tuple(rule.code for rule in ALL_RULES)
# Every selector that matches at least one code: ALL, TCL, TCL4, TCL40, TCL401, ...
VALID_SELECTORS = frozenset({ALL_SELECTOR} | {code[:length] for code in RULE_CODES
                                              for length in range(len(RULE_PREFIX), len(code) + 1)})


def _matches(code: str, selectors) -> bool:
    return any(selector == ALL_SELECTOR or code.startswith(selector) for selector in selectors)


def _chooses(rule, selectors) -> bool:
    """A default-off rule is chosen only by its exact code; the others by any matching prefix."""
    return rule.code in selectors if not rule.default_enabled else _matches(rule.code, selectors)


def enabled_codes(select=(), extend_select=(), ignore=()) -> frozenset[str]:
    """ruff semantics: `select` replaces the defaults, `extend_select` adds, `ignore` removes (the
    more specific of a select and an ignore wins)."""
    codes = set()
    for rule in ALL_RULES:
        chosen = _chooses(rule, select) if select else rule.default_enabled
        chosen = chosen or _chooses(rule, extend_select)
        if chosen and ignore:
            ignoring = [s for s in ignore if s == ALL_SELECTOR or rule.code.startswith(s)]
            selecting = [s for s in (*select, *extend_select) if s == ALL_SELECTOR or rule.code.startswith(s)]
            if ignoring and max(len(s) for s in ignoring) >= max((len(s) for s in selecting), default=0):
                chosen = False
        if chosen:
            codes.add(rule.code)
    return frozenset(codes)


def closest_selector(selector: str) -> str:
    """The real code nearest to a typo (difflib's ratio, as ruff suggests one)."""
    candidates = (*RULE_CODES, RULE_PREFIX)
    return (difflib.get_close_matches(selector, candidates, n=1, cutoff=0.0) or [RULE_CODES[0]])[0]


def unknown_selector_reason(selector: str) -> str | None:
    """None for a selector that matches a code; else the reason, with the closest valid one."""
    if selector in VALID_SELECTORS:
        return None
    return (f"unknown rule code or prefix {selector!r}; did you mean {closest_selector(selector)}? "
            "(`tensorcost explain` lists the codes)")


def check_selectors(source: str, key: str, selectors) -> tuple[str, ...]:
    """The selectors, upper-cased; a ConfigError naming `source`, `key` (with the index, for a
    list from a file) and the closest code, for the first one that matches nothing."""
    checked = []
    for index, selector in enumerate(selectors):
        text = str(selector).strip().upper()
        reason = unknown_selector_reason(text)
        if reason is not None:
            raise ConfigError(source, f"{key}[{index}]" if key else "", reason)
        checked.append(text)
    return tuple(checked)
