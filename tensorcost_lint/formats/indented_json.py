"""`json.dumps(value, indent=n, ensure_ascii=...)`, byte for byte, at several times its speed, handed
to a writer as it is made.

With an indent, CPython before 3.13 encodes in pure Python: a generator per container and several
calls per value (100,000 call sites: ~12 s of a `check --format json`). This writer walks plain data
(dicts, lists, tuples, str, int, float, bool, None) once, encoding strings with the C escapers json
itself uses, and hands the text on in chunks of ~1 MB: a report of 100,000 sites is never held
whole (a `model --format json` of a 100,000-statement forward held 27 MB of text and ~110 MB more in
its pieces). A chunk once written cannot be taken back for json.dumps to redo, so anything but plain
data is a TypeError.
"""

from __future__ import annotations

from json.encoder import encode_basestring, encode_basestring_ascii

_INFINITY = float("inf")
# `consume`: the items of lists up to this depth (`check`'s sites at 2, `model`'s at 3) are let go
# once written (100,000 site records are ~200 MB as dicts)
_CONSUMED_DEPTH = 3
_CHUNK_PIECES = 8192  # pieces joined into one chunk for the writer
_SCALARS = {None: "null", True: "true", False: "false"}


class _Other(Exception):
    """A value this writer does not encode (a subclass, an unusual key)."""


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _key(key, string) -> str:
    kind = type(key)
    if kind is str:
        return string(key)
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if kind is int:
        return '"' + int.__repr__(key) + '"'
    if kind is float:
        return '"' + _float(key) + '"'
    raise _Other


class Streamed:
    """A value's `json.dumps(value, indent=indent, ensure_ascii=ensure_ascii) + end` text, for a
    writer. `consume`: the items of shallow lists are set to None once written (a caller that made
    `value` only to write it)."""

    def __init__(self, value, indent: int = 2, ensure_ascii: bool = True, end: str = "", consume: bool = False):
        self.value, self.indent, self.ensure_ascii, self.end, self.consume = value, indent, ensure_ascii, end, consume

    def write_to(self, write) -> None:
        """Calls `write(text)` for each chunk in order; the chunks joined are the text."""
        value, self.value = self.value, None  # written once: a consumed value is gone
        _write(value, self.indent, self.ensure_ascii, self.end, self.consume, write)


def _write(value, indent: int, ensure_ascii: bool, end: str, consume: bool, flush) -> None:
    """The text, to `flush` in chunks: the pieces made so far, joined, whenever enough have gathered
    at the end of a list's item."""
    string = encode_basestring_ascii if ensure_ascii else encode_basestring
    parts: list = []
    append = parts.append
    key_texts: dict = {}  # a str key -> its JSON text and ": "
    step = " " * indent
    shallowest = 1 + _CONSUMED_DEPTH * len(step)  # the margin of items at that depth

    def write(item, margin: str) -> None:
        kind = type(item)
        if kind is str:
            append(string(item))
        elif item is None:
            append("null")
        elif item is True:
            append("true")
        elif item is False:
            append("false")
        elif kind is int:
            append(int.__repr__(item))
        elif kind is float:
            append(_float(item))
        elif kind is dict:
            if not item:
                append("{}")
                return
            inner = margin + step
            separator = "{" + inner
            for key, entry in item.items():
                # a report repeats a few keys 100,000 times: each encoded once, and a scalar entry
                # goes in with its key as one piece
                head = key_texts.get(key) if type(key) is str else None
                if head is None:
                    head = (string(key) if type(key) is str else _key(key, string)) + ": "
                    if type(key) is str:
                        key_texts[key] = head
                kind = type(entry)
                if entry is None or kind is bool:
                    append(separator + head + _SCALARS[entry])
                elif kind is str:
                    append(separator + head + string(entry))
                elif kind is int:
                    append(separator + head + int.__repr__(entry))
                else:
                    append(separator + head)
                    write(entry, inner)
                separator = "," + inner
            append(margin + "}")
        elif kind is list or kind is tuple:
            if not item:
                append("[]")
                return
            inner = margin + step
            separator = "[" + inner
            shallow = len(inner) <= shallowest
            for index, entry in enumerate(item):
                append(separator)
                write(entry, inner)
                if len(parts) >= _CHUNK_PIECES:
                    flush("".join(parts))
                    parts.clear()
                if consume and shallow and kind is list:
                    item[index] = None  # written: its memory goes back as its text grows
                separator = "," + inner
            append(margin + "]")
        else:
            raise _Other

    try:
        write(value, "\n")
    except (_Other, RecursionError):
        raise TypeError("a JSON report's value is not plain JSON data, or is nested too deep") from None
    append(end)
    flush("".join(parts))
