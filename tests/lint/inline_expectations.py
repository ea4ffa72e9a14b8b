"""Expectations written on the fixture lines themselves, flake8-bugbear style: a trailing comment
`# TCL201` (or `# TCL001 TCL002`, several codes on one line) says which findings that line raises.
Editing a fixture never means renumbering a separate file.

The expectation is the last `#` segment of a real comment (read with `tokenize`, so text inside a
string is never one); a shape comment or a pragma may come before it on the same line, and the
analysis ignores the trailing `# TCL...` (tests/lint/test_fixtures.py checks that it does).
"""

from __future__ import annotations

import io
import re
import tokenize

_CODE = r"(?:TCL|E)[0-9]{3}"
EXPECTATION = re.compile(rf"#\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*)\s*$")


def expected_findings(text: str) -> list[tuple[int, str]]:
    """(line, code) for every code the fixture's expectation comments name, in line order."""
    expected = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type != tokenize.COMMENT:
            continue
        match = EXPECTATION.search(token.string)
        if match:
            expected.extend((token.start[0], code) for code in re.split(r"[\s,]+", match.group("codes")))
    return expected


def without_expectations(text: str) -> str:
    """The fixture with its expectation comments removed (the rest of each line kept as written)."""
    lines = text.splitlines(keepends=True)
    for line, _ in sorted(set(expected_findings(text))):
        body = lines[line - 1].rstrip("\r\n")
        ending = lines[line - 1][len(body):]
        lines[line - 1] = EXPECTATION.sub("", body).rstrip() + ending
    return "".join(lines)


def mismatches(text: str, findings) -> tuple[list, list]:
    """(expected but not found, found but not expected) as (line, code) lists: both empty when the
    findings are exactly the expectations — line exact, code exact, each as often as written."""
    expected = expected_findings(text)
    found = [(f.line, f.code) for f in findings]
    missing, unexpected = list(expected), []
    for pair in found:
        if pair in missing:
            missing.remove(pair)
        else:
            unexpected.append(pair)
    return missing, unexpected
