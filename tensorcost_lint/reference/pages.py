"""The generated pages, by path relative to the repository root, and the command that rewrites
them: `python -m tensorcost_lint.reference` (run from the repository root)."""

from __future__ import annotations

from pathlib import Path

from ..rules import ALL_RULES
from ..rules.docs import rule_page
from .command_line import command_line_page
from .config_keys import configuration_page
from .supported_ops import supported_ops_page


def generated_pages() -> dict[str, str]:
    pages = {
        "docs/reference/configuration.md": configuration_page(),
        "docs/reference/command-line.md": command_line_page(),
        "docs/reference/supported-ops.md": supported_ops_page(),
    }
    for rule in ALL_RULES:
        pages[f"docs/rules/{rule.code}.md"] = rule_page(rule.code)
    return pages


def write_pages(root: Path | str) -> list[Path]:
    written = []
    for relative, text in generated_pages().items():
        path = Path(root) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written
