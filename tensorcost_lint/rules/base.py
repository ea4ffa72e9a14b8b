"""The rule interface: one class per code, carrying its documentation and its own examples.

`tensorcost explain CODE` renders the documentation as a ruff-style page; one parametrised test
lints every VALID and INVALID example, so a rule cannot land without examples that prove it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..findings import Finding, Fix


@dataclass(frozen=True)
class Example:
    """A snippet that must (INVALID) or must not (VALID) raise the rule, with the config it needs."""

    source: str
    config: dict = field(default_factory=dict)
    expect: tuple[str, ...] = ()  # codes an INVALID example must raise (default: the rule's own)


@dataclass
class SiteResult:
    site: object  # analysis.context.CallSite
    cost: object  # site_costs.SiteCost


@dataclass
class RuleContext:
    path: str
    config: object  # ProjectConfig
    sizes: dict
    sites: list  # SiteResult
    diagnostics: list  # analysis Diagnostics
    source_lines: list = field(default_factory=list)


class Rule:
    code: str = ""
    name: str = ""  # kebab-case
    summary: str = ""
    severity: str = "warning"
    default_enabled: bool = True
    what_it_does: str = ""
    why_bad: str = ""
    example: str = ""
    use_instead: str = ""
    known_problems: str = ""
    options: str = ""
    valid: tuple[Example, ...] = ()
    invalid: tuple[Example, ...] = ()

    def check(self, context: RuleContext):
        """Yield findings for one file; the default walks the sites."""
        for result in context.sites:
            yield from self.check_site(result, context)

    def check_site(self, result: SiteResult, context: RuleContext):
        return ()

    def finding(self, context: RuleContext, line: int, column: int, message: str, *, site: int | None = None,
                end_line: int | None = None, end_column: int | None = None, fix: Fix | None = None) -> Finding:
        return Finding(context.path, line, column, self.code, self.severity, message, site, end_line, end_column, fix)

    def at_site(self, context: RuleContext, result: SiteResult, message: str, fix: Fix | None = None) -> Finding:
        site = result.site
        return self.finding(context, site.line, site.column, message, site=site.id, end_line=site.end_line,
                            end_column=site.end_column, fix=fix)
