"""The generated pages, by path relative to the repository root, the generated blocks inside
hand-written pages (between `<!-- NAME ... -->` and `<!-- end NAME -->` markers), and the command
that rewrites both: `python -m tensorcost_lint.reference` (run from the repository root)."""

from __future__ import annotations

from pathlib import Path

from ..rules import ALL_RULES
from ..analysis.site_registry import readme_list
from ..rules.docs import rule_page, rule_table
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


def generated_blocks() -> list[tuple[str, str, str]]:
    """(page, marker name, the block's text) for each generated block of a hand-written page."""
    return [
        ("README.md", "rule-table", rule_table()),
        ("docs/rules/index.md", "rule-table", rule_table()),
        ("docs/shapes.md", "site-list", readme_list()),
    ]


def _block_span(text: str, name: str) -> tuple[int, int]:
    """Where the block between the markers starts (after the opening comment's line) and ends (at
    the start of the closing marker's line)."""
    opening = text.index(f"<!-- {name}")
    start = text.index("\n", text.index("-->", opening)) + 1
    end = text.rindex("\n", 0, text.index(f"<!-- end {name} -->", start)) + 1
    return start, end


def block_in(text: str, name: str) -> str:
    start, end = _block_span(text, name)
    return text[start:end]


def with_block(text: str, name: str, block: str) -> str:
    start, end = _block_span(text, name)
    return text[:start] + block + text[end:]


def write_pages(root: Path | str) -> list[Path]:
    written = []
    root = Path(root)
    for relative, text in generated_pages().items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    for relative, name, block in generated_blocks():
        path = root / relative
        text = path.read_text(encoding="utf-8")
        if block_in(text, name) != block:
            path.write_text(with_block(text, name, block), encoding="utf-8")
            written.append(path)
    return written
