"""Identifiers as Python reads them: NFKC-normalised (PEP 3131), so `self.ℓin` *is* `self.lin`.

The stdlib parser folds identifiers; LibCST keeps them as written. Without folding, a model that
spells one attribute two ways would be costed as two attributes (the wrong layer). Only identifier
tokens change; strings and comments keep their text.
"""

from __future__ import annotations

import io
import re
import tokenize
import unicodedata

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")


def python_identifiers(text: str) -> str:
    """`text` with each identifier replaced by its NFKC form (unchanged when all are already)."""
    if text.isascii():
        return text  # the common case, at the cost of one scan
    lines = _LINE.findall(text)  # as the tokenizer counts them (not str.splitlines: \x0c, \u2028)
    changes = []  # (line index, start column, end column, new text)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME and not token.string.isascii():
                folded = unicodedata.normalize("NFKC", token.string)
                if folded != token.string and token.start[0] == token.end[0]:
                    changes.append((token.start[0] - 1, token.start[1], token.end[1], folded))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return text  # the parser reports what is wrong with it
    for row, start, end, folded in reversed(changes):  # right to left: earlier columns stay valid
        line = lines[row]
        lines[row] = line[:start] + folded + line[end:]
    return "".join(lines)
