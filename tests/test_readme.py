"""README's promises: its two opening commands, and a rule table that matches the rules."""

from __future__ import annotations

from pathlib import Path

from tensorcost_lint.rules.docs import rule_table

README_PATH = Path(__file__).resolve().parent.parent / "README.md"
README = README_PATH.read_text()


def test_readme_opens_with_the_two_setup_commands():
    block = README.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(block) == 2
    assert block[0].endswith("tensorcost check examples/")
    assert "pip install -q -e ." in block[0]
    assert block[1].endswith("python -m pytest -n 2") and '".[test]"' in block[1]


def test_ci_runs_the_readme_test_command():
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert "python -m pytest -n 2" in ci and '".[test]"' in ci


def test_rule_table_matches_the_rules():
    table = README.split("<!-- rule-table", 1)[1].split("-->", 1)[1].split("<!-- end rule-table -->", 1)[0]
    assert table.strip() == rule_table().strip()


def test_published_rule_pages_match_the_rules():
    from tensorcost_lint.rules import ALL_RULES
    from tensorcost_lint.rules.docs import rule_page

    pages = Path(__file__).resolve().parent.parent / "docs" / "rules"
    for rule in ALL_RULES:
        assert (pages / f"{rule.code}.md").read_text() == rule_page(rule.code), (
            f"docs/rules/{rule.code}.md is stale: run python -m tensorcost_lint.rules.docs")


def test_sample_output_is_what_the_tool_prints():
    """README's sample lines, character for character, against `tensorcost check examples/`."""
    from tests.cli.inprocess import tensorcost_in

    block = README.split("<!-- sample-output", 1)[1].split("```console\n", 1)[1].split("```", 1)[0].splitlines()
    assert block[0] == "$ tensorcost check examples/"
    result = tensorcost_in(README_PATH.parent, "check", "--no-cache", "examples/")
    printed = result.stdout.splitlines()
    assert result.returncode == 1
    findings, tail = block[1:block.index("…")], block[block.index("…") + 1:]
    for line in findings:
        assert line in printed, f"README sample line not printed by the tool:\n{line}"
    assert printed[-len(tail):] == tail


def test_readme_is_a_short_landing_page():
    assert len(README.encode("utf-8")) <= 12 * 1024


def test_every_relative_link_in_the_readme_leads_to_a_file():
    import re

    links = re.findall(r"\]\(([^)\s]+)\)", README)
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert relative, "README links its docs pages"
    for link in relative:
        target = link.split("#", 1)[0]
        assert target and (README_PATH.parent / target).exists(), f"README links to {link}, which does not exist"
    assert "DESIGN.md" not in README  # it does not ship: the public contract is docs/contract.md
