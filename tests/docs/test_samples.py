"""Console samples in the docs are what the tool prints. A sample is a ```console block after a
`<!-- sample-output cwd=DIR ... -->` comment: its `$ tensorcost ...` line runs in DIR (relative to
the repository root), and its other lines must be the output — all of it, or, around a `…` line,
lines the output holds (before it) and the output's last lines (after it)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.cli.inprocess import tensorcost_in

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"<!-- sample-output cwd=(\S+?):? .*?-->\n(\s*)```console\n(.*?)\n\s*```", re.S)


def samples() -> list:
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for match in MARKER.finditer(page.read_text(encoding="utf-8")):
            cwd, indent, body = match.groups()
            lines = [line[len(indent):] if line.startswith(indent) else line for line in body.split("\n")]
            found.append(pytest.param(cwd, lines, id=f"{page.relative_to(ROOT)}:{lines[0][:60]}"))
    return found


def test_there_are_samples_on_the_docs_pages():
    assert len(samples()) >= 4


@pytest.mark.parametrize("cwd, lines", samples())
def test_sample_is_what_the_tool_prints(cwd, lines):
    command = lines[0]
    assert command.startswith("$ tensorcost "), command
    argv = shlex.split(command[len("$ tensorcost "):])
    printed = tensorcost_in(ROOT / cwd, *argv).stdout.rstrip("\n").split("\n")
    expected = lines[1:]
    if "…" not in expected:
        assert printed == expected
        return
    cut = expected.index("…")
    head, tail = expected[:cut], expected[cut + 1:]
    for line in head:
        assert line in printed, f"sample line not printed by the tool:\n{line}"
    if tail:
        assert printed[-len(tail):] == tail
