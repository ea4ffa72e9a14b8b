"""File pragmas: `# tensorcost: dims T=1024 B=8` declares dim sizes for one file.

Precedence (bindings.py): config `dims` < pragma < CLI `--dim`. A pragma is a promise about
sizes, so a malformed one is an error with the column of the bad binding, never skipped.
Sizes are positive decimal integers, `_` separators allowed (`8_192`); `1e3`, `0`, `-1`, `2**10`,
a bad name or a name given twice are refused.
"""

from __future__ import annotations

from .errors import ShapeError
from .limits import MAX_SIZE, check_text_size

_MARKER = "tensorcost:"
_DIRECTIVE = "dims"


def parse_pragma(comment: str) -> dict[str, int] | None:
    """The sizes a `# tensorcost: dims ...` comment declares; None for any other comment.

    Other `tensorcost:` directives are left to their own readers (None), except near-misses of
    `dims` (`dim`, `dimensions`), which are errors: a typo must not silently drop the sizes.
    """
    check_text_size(comment, "pragma")
    i = _skip(comment, 0)
    if not comment.startswith("#", i):
        return None
    i = _skip(comment, i + 1)
    if not comment.startswith(_MARKER, i):
        return None
    i = _skip(comment, i + len(_MARKER))
    word_end = i
    while word_end < len(comment) and (comment[word_end].isalnum() or comment[word_end] == "_"):
        word_end += 1
    word = comment[i:word_end]
    if word != _DIRECTIVE:
        if word.lower().startswith("dim"):
            raise ShapeError(f"unknown tensorcost directive {word!r}; did you mean 'dims'?", i, len(word) or 1)
        return None
    return _bindings(comment, word_end, i)


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _bindings(comment: str, i: int, directive_at: int) -> dict[str, int]:
    sizes: dict[str, int] = {}
    n = len(comment)
    if i < n and not comment[i].isspace():
        raise ShapeError("expected a space after 'dims'", i, 1)
    while True:
        while i < n and (comment[i].isspace() or comment[i] == ","):
            i += 1
        if i >= n or comment[i] == "#":  # a trailing `# note` ends the pragma
            break
        name_start = i
        while i < n and not comment[i].isspace() and comment[i] not in "=,#":
            i += 1
        name = comment[name_start:i]
        if not name.isidentifier():
            raise ShapeError(f"invalid dim name {name!r}", name_start, max(1, len(name)))
        i = _skip(comment, i)
        if i >= n or comment[i] != "=":
            raise ShapeError(f"expected '=' and a size after {name!r}", i if i < n else name_start, 1)
        i = _skip(comment, i + 1)
        value_start = i
        while i < n and not comment[i].isspace() and comment[i] not in ",#":
            i += 1
        text = comment[value_start:i]
        if name in sizes:
            raise ShapeError(f"dim {name!r} is given twice", name_start, len(name))
        sizes[name] = _size(name, text, value_start)
    if not sizes:
        raise ShapeError("'tensorcost: dims' declares no sizes (expected NAME=SIZE ...)", directive_at, 4)
    return sizes


def _size(name: str, text: str, at: int) -> int:
    digits = text.replace("_", "")
    well_formed = (
        text
        and digits.isascii()
        and digits.isdigit()
        and not text.startswith("_")
        and not text.endswith("_")
        and "__" not in text
    )
    if not well_formed:
        raise ShapeError(f"size of {name!r} must be a positive integer, got {text!r}", at, max(1, len(text)))
    if len(digits) > 19 or int(digits) > MAX_SIZE:
        raise ShapeError(f"size of {name!r} exceeds 2**63-1", at, len(text))
    value = int(digits)
    if value <= 0:
        raise ShapeError(f"size of {name!r} must be positive, got {text}", at, len(text))
    return value
