"""The rule interface: one class per code, carrying its documentation and its own examples.

`tensorcost explain CODE` renders the documentation as a ruff-style page; one parametrised test
lints every VALID and INVALID example, so a rule cannot land without examples that prove it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .findings import Finding, Fix


@dataclass(frozen=True)
class Example:
    """A snippet that must (INVALID) or must not (VALID) raise the rule, with the config it needs."""

    source: str
    config: dict = field(default_factory=dict)
    expect: tuple[str, ...] = ()  # codes an INVALID example must raise (default: the rule's own)
    # For rules that compare two runs (TCL601): the file as the baseline saw it, and that run's config
    # (default: `config`); the example is then checked with `check --baseline`.
    baseline: str | None = None
    baseline_config: dict | None = None


@dataclass
class SiteResult:
    site: object  # analysis.context.CallSite
    cost: object  # site_costs.SiteCost


@dataclass
class RuleContext:
    path: str
    settings: object  # lint_settings.LintSettings: what the engine resolved from the config, once
    sizes: dict
    sites: list  # SiteResult
    reported: list  # analysis.problems.Reported: facts the analysis stated at a place in the file
    source_lines: list = field(default_factory=list)

    @property
    def config(self):
        """The same `settings` under the name rules read before (it carries `ProjectConfig`'s names)."""
        return self.settings


class Rule:
    code: str = ""
    name: str = ""  # kebab-case
    summary: str = ""
    severity: str = "warning"
    default_enabled: bool = True
    enabled_note: str = ""  # when neither on nor off by default says it ("on with `--baseline`")
    what_it_does: str = ""
    why_bad: str = ""
    example: str = ""
    use_instead: str = ""
    known_problems: str = ""
    options: str = ""
    fix_title: str = ""  # the title of the rule's automatic fix, where it has one
    fix_safety: str = "No automatic fix is offered: the change needs a decision the code does not state."
    references: tuple[str, ...] = ()  # Markdown links for the page's References section
    valid: tuple[Example, ...] = ()
    invalid: tuple[Example, ...] = ()
    # The analysis facts (analysis.problems) this rule puts into words: shape problems of a site's
    # model, or facts the analysis reported at a place. Each fact type belongs to exactly one rule.
    facts: tuple[type, ...] = ()

    def message(self, fact, sizes: dict) -> str:
        """The words for one of this rule's facts."""
        raise NotImplementedError(f"{self.code} words no facts")

    def check(self, context: RuleContext):
        """Yield findings for one file: the sites, then the facts reported at places."""
        for result in context.sites:
            yield from self.check_site(result, context)
        if self.facts:
            for reported in context.reported:
                if isinstance(reported.fact, self.facts):
                    yield self.report(context.path, reported.line, reported.column,
                                      self.message(reported.fact, context.sizes))

    def check_site(self, result: SiteResult, context: RuleContext):
        """The default: this rule's facts among the site's shape problems."""
        shapes = result.site.shapes
        if self.facts and shapes is not None:
            for problem in shapes.problems:
                if isinstance(problem, self.facts):
                    yield self.at_site(context, result, self.message(problem, context.sizes))

    def report(self, path: str, line: int, column: int, message: str, *, site: int | None = None,
               end_line: int | None = None, end_column: int | None = None, fix: Fix | None = None) -> Finding:
        """The one place a TCL finding is made."""
        return Finding(path, line, column, self.code, self.severity, message, site, end_line, end_column, fix)

    def at_site(self, context: RuleContext, result: SiteResult, message: str, fix: Fix | None = None) -> Finding:
        site = result.site
        return self.report(context.path, site.line, site.column, message, site=site.id, end_line=site.end_line,
                           end_column=site.end_column, fix=fix)
