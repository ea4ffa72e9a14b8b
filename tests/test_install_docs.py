"""The install lines users copy: a distribution name nobody else holds, and nothing that points
at the unrelated `tensorcost` project on PyPI or at a release tag that does not exist."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTION = "tensorcost-lint"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_distribution_is_renamed_and_keeps_the_console_script_and_flake8_entry():
    project = _project()
    assert project["name"] == DISTRIBUTION
    assert project["scripts"] == {"tensorcost": "tensorcost_lint.cli.main:main"}
    assert project["entry-points"]["flake8.extension"] == {"TCL": "tensorcost_lint.adapters.flake8_plugin:TensorCostChecker"}
    assert project["optional-dependencies"]["all"] == [f"{DISTRIBUTION}[lsp,plot,measure,test]"]


def test_every_install_line_in_the_docs_names_the_new_distribution_pinned_to_a_commit():
    install_lines = []
    for doc in DOCS:
        for line in doc.read_text().splitlines():
            for command in re.findall(r"pip install [^`\n&]*", line):
                install_lines.append((doc.name, command))
                assert not re.search(r"""(?<![-\w])["']?tensorcost(\[|==|["'\s]|$)""", command), (doc.name, command)
                if DISTRIBUTION in command:
                    assert "git+https://github.com/tensorcost/tensorcost@<commit>" in command, (doc.name, command)
    assert sum(DISTRIBUTION in command for _, command in install_lines) >= 5
    for doc in DOCS:
        text = doc.read_text()
        assert "rev: v0.1.0" not in text and "tensorcost==" not in text, doc.name


def test_pre_commit_hook_runs_serially_so_one_run_prints_one_summary():
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "tensorcost" and hook["require_serial"] is True


def test_speed_benchmark_filters_the_plugin_by_the_distribution_name():
    text = (ROOT / "benchmarks" / "lint_speed.py").read_text()
    assert f'!= "{DISTRIBUTION}"' in text
