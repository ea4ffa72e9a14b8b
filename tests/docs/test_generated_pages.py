"""Pages generated from the code are current, and say everything the code holds: a config key the
parser reads, a flag the argument parser takes, an op in the analysis tables or a rule cannot
appear without its docs. Regenerate with `python -m tensorcost_lint.reference`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensorcost_lint.cli.main import COMMANDS
from tensorcost_lint.config.fields import MappingReader
from tensorcost_lint.config.key_docs import KEY_DOCS, NO_DEFAULT
from tensorcost_lint.config.project_config import parse_config
from tensorcost_lint.reference import config_keys
from tensorcost_lint.reference.command_line import command_actions
from tensorcost_lint.reference.pages import block_in, generated_blocks, generated_pages, with_block, write_pages

ROOT = Path(__file__).resolve().parents[2]
STALE = "is stale: run `python -m tensorcost_lint.reference` from the repository root"


@pytest.mark.parametrize("relative", sorted(generated_pages()))
def test_generated_page_is_current(relative):
    path = ROOT / relative
    assert path.exists() and path.read_text(encoding="utf-8") == generated_pages()[relative], f"{relative} {STALE}"


@pytest.mark.parametrize("relative, name, block", generated_blocks(), ids=lambda v: v if isinstance(v, str) and "\n" not in v else "")
def test_generated_block_is_current(relative, name, block):
    assert block_in((ROOT / relative).read_text(encoding="utf-8"), name) == block, f"{relative} ({name}) {STALE}"


def test_every_key_the_parser_reads_is_documented_and_nothing_else():
    read = config_keys.parsed_keys()
    assert set(read) == set(KEY_DOCS), (
        f"undocumented: {sorted(set(read) - set(KEY_DOCS))}; documented but not read: {sorted(set(KEY_DOCS) - set(read))}"
        " (tensorcost_lint/config/key_docs.py)")
    page = (ROOT / "docs/reference/configuration.md").read_text(encoding="utf-8")
    for key in read:
        assert f"| `{key}` |" in page


def test_a_key_added_to_the_parser_shows_as_undocumented(monkeypatch):
    """The probe sees what the parser reads, so a new key cannot slip past the page test."""
    original = MappingReader.finish

    def finish(reader):
        if reader.prefix == "budgets":
            reader.raw("new_budget")  # what a new key in the parser looks like to the probe
        return original(reader)

    monkeypatch.setattr(MappingReader, "finish", finish)
    assert "budgets.new_budget" in config_keys.parsed_keys()
    assert "| `budgets.new_budget` | ? | ? | **undocumented**" in config_keys.configuration_page()


def _document_with(key: str, value) -> dict:
    """The smallest config that sets `key` (dotted, `NAME` for a model) to `value`."""
    parts = key.split(".")
    document: dict = {}
    if parts[0] == "models":
        document = {"models": {"NAME": {"entry": "model.py:Model.forward"}}}
    node = document
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return document


def _without(key: str) -> dict:
    """The smallest config that leaves `key` out but opens its parent mapping."""
    parent = key.rpartition(".")[0]
    if not parent:
        return {}
    if parent == "models.NAME":
        return _document_with("models.NAME.entry", "model.py:Model.forward")
    return _document_with(parent, {})


def _parsed(document):
    config = parse_config(document, "test.yaml", ROOT)
    return config, config.models  # models compare apart: ProjectConfig leaves them out of ==


@pytest.mark.parametrize("key", [key for key, doc in KEY_DOCS.items() if doc.default is not NO_DEFAULT])
def test_documented_default_is_what_leaving_the_key_out_gives(key):
    assert _parsed(_document_with(key, KEY_DOCS[key].default)) == _parsed(_without(key)), key


def test_every_command_line_flag_has_a_help_text():
    missing = [f"{name} {action.option_strings or action.dest}"
               for name in COMMANDS for action in command_actions(name) if not action.help]
    assert not missing, f"flags without help= (the command-line reference prints it): {missing}"


def test_every_command_line_flag_is_on_the_page():
    page = (ROOT / "docs/reference/command-line.md").read_text(encoding="utf-8")
    for name in COMMANDS:
        section = page.split(f"## `tensorcost {name}`", 1)[1].split("\n## ", 1)[0]
        for action in command_actions(name):
            for option in action.option_strings:
                assert f"`{option}`" in section, (name, option)


def test_write_pages_rewrites_a_stale_page_and_block(tmp_path):
    for relative in ("README.md", "docs/rules/index.md", "docs/shapes.md"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text((ROOT / relative).read_text(encoding="utf-8"), encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(with_block(readme.read_text(encoding="utf-8"), "rule-table", "| stale |\n"), encoding="utf-8")
    written = write_pages(tmp_path)
    assert readme in written and tmp_path / "docs/reference/configuration.md" in written
    assert readme.read_text(encoding="utf-8") == (ROOT / "README.md").read_text(encoding="utf-8")
    assert write_pages(tmp_path) == []
