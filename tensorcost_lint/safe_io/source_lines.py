"""Source lines as Python numbers them.

`str.splitlines()` also breaks at form feeds, vertical tabs, \\x1c-\\x1e, \\x85 and \\u2028/9, which
Python's tokenizer (and so every line number in `ast`, LibCST and our findings) does not: one such
character in a comment would shift every line after it.
"""

from __future__ import annotations

import re

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def source_lines(text: str, keepends: bool = False) -> list[str]:
    if not keepends:
        lines = _LINE_BREAK.split(text)
        return lines[:-1] if lines and lines[-1] == "" else lines
    lines, start = [], 0
    for match in _LINE_BREAK.finditer(text):
        lines.append(text[start: match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines
