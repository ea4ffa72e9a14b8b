"""Names and messages as a terminal or CI log can show them safely.

A file name may hold a newline, ESC or a bidi override: printed raw, `bad\\n::error file=x::...`
becomes a second, forged line in a CI log (a fake `::error` annotation), and ESC sequences recolour
or rewrite the terminal. Each such character is shown as its Python escape (`\\n`, `\\x1b`,
`\\u202e`), so one finding stays one honest line.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, line/paragraph separators, bidi controls (Trojan Source), lone surrogates
# (undecodable bytes in a file name).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def printable(text: str, keep: str = "") -> str:
    """`text` with every unsafe character not in `keep` replaced by its escape."""
    return _UNSAFE.sub(lambda match: match.group() if match.group() in keep else repr(match.group())[1:-1], text)
