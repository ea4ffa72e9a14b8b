"""Rule pages, ruff-style, generated from each rule's own fields: one source for `explain`, SARIF
help text and the README's rule table."""

from __future__ import annotations

from . import ALL_RULES, RULES_BY_CODE

# Where each rule's page is published: docs/rules/CODE.md in this repository (generated from the
# rules by `python -m tensorcost_lint.rules.docs`; tests/test_readme.py keeps them in sync).
RULE_DOCS_URL = "https://github.com/tensorcost/tensorcost/blob/main/docs/rules/{code}.md"


def rule_page(code: str) -> str | None:
    rule = RULES_BY_CODE.get(code.upper())
    if rule is None:
        return None
    enabled = "on by default" if rule.default_enabled else "off by default (enable with `--select` or `extend_select`)"
    if rule.enabled_note:
        enabled = rule.enabled_note
    parts = [
        f"# {rule.name} ({rule.code})",
        "",
        f"{rule.summary}. Severity: {rule.severity}; {enabled}.",
        "",
        "## What it does",
        rule.what_it_does,
        "",
        "## Why is this bad?",
        rule.why_bad,
        "",
        "## Example",
        "```python",
        rule.example,
        "```",
        "",
        "## Use instead",
        "```python",
        rule.use_instead,
        "```",
    ]
    if rule.known_problems:
        parts += ["", "## Known problems", rule.known_problems]
    if rule.options:
        parts += ["", "## Options", rule.options]
    parts += ["", "## Fix safety", rule.fix_safety]
    if rule.references:
        parts += ["", "## References", *(f"- {reference}" for reference in rule.references)]
    return "\n".join(parts) + "\n"


def rule_table() -> str:
    lines = ["| code | name | default | summary |", "|---|---|---|---|"]
    for rule in ALL_RULES:
        lines.append(f"| {rule.code} | {rule.name} | {rule.enabled_note or ('on' if rule.default_enabled else 'off')} | {rule.summary} |")
    return "\n".join(lines) + "\n"


def write_rule_pages(directory) -> list:
    """Write docs/rules/CODE.md for every rule; returns the paths written."""
    from pathlib import Path

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for rule in ALL_RULES:
        path = directory / f"{rule.code}.md"
        path.write_text(rule_page(rule.code), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    import sys

    for path in write_rule_pages(sys.argv[1] if len(sys.argv) > 1 else "docs/rules"):
        print(path)
