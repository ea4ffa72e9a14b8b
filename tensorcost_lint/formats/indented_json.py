"""`json.dumps(value, indent=n, ensure_ascii=...)`, byte for byte, at several times its speed.

With an indent, CPython before 3.13 encodes in pure Python: a generator per container and several
calls per value (100,000 call sites: ~12 s of a `check --format json`). This writer walks the same
plain data (dicts, lists, tuples, str, int, float, bool, None) once, encoding strings with the C
escapers json itself uses; anything else goes to `json.dumps`, so the output never differs.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring, encode_basestring_ascii

_INFINITY = float("inf")
# Items of lists up to this depth (`check`'s sites at 2, `model`'s at 3) are joined as soon as they
# are written: 100,000 sites are ~5 million small strings otherwise (~450 MB held until the last join).
_JOINED_DEPTH = 3
_SCALARS = {None: "null", True: "true", False: "false"}


class _Other(Exception):
    """A value this writer does not encode (a subclass, an unusual key): json.dumps decides."""


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


def dumps_indented(value, indent: int = 2, ensure_ascii: bool = True, end: str = "", consume: bool = False) -> str:
    """`end` is appended in the one join (`+ "\n"` afterwards copies a 100 MB report once more).
    `consume`: the items of shallow lists are set to None once written (a caller that made `value`
    only to write it: 100,000 site records are ~200 MB as dicts, ~100 MB as text)."""
    return "".join(indented_parts(value, indent, ensure_ascii, end, consume))


def indented_parts(value, indent: int = 2, ensure_ascii: bool = True, end: str = "",
                   consume: bool = False) -> list[str]:
    """dumps_indented's text as the pieces it is joined from (one per shallow item): a caller that
    only writes the text writes them in turn, never holding the text twice."""
    return _encoded(value, indent, ensure_ascii, end, consume, None)


class Streamed:
    """dumps_indented's text handed to a writer as it is made, in chunks of ~1 MB: a report of 100,000
    sites is never held whole (a `model --format json` of a 100,000-statement forward held 27 MB of
    text and ~110 MB more in its pieces). Its value must be plain JSON data (dicts, lists, tuples,
    str, int, float, bool, None): a chunk once written cannot be taken back for json.dumps to redo,
    so anything else is a TypeError. `consume` as for indented_parts."""

    def __init__(self, value, indent: int = 2, ensure_ascii: bool = True, end: str = "", consume: bool = False):
        self.value, self.indent, self.ensure_ascii, self.end, self.consume = value, indent, ensure_ascii, end, consume

    def write_to(self, write) -> None:
        """Calls `write(text)` for each chunk in order; the chunks joined are dumps_indented's text."""
        value, self.value = self.value, None  # written once: a consumed value is gone
        for piece in _encoded(value, self.indent, self.ensure_ascii, self.end, self.consume, write):
            write(piece)


_CHUNK_PIECES = 8192  # pieces joined into one chunk for a streaming writer


def _encoded(value, indent: int, ensure_ascii: bool, end: str, consume: bool, flush) -> list[str]:
    """The pieces of the text. With `flush`, the pieces made so far go to it, joined, whenever
    enough have gathered at the end of a shallow item; what is returned is the rest."""
    string = encode_basestring_ascii if ensure_ascii else encode_basestring
    parts: list = []
    append = parts.append
    key_texts: dict = {}  # a str key -> its JSON text and ": "
    step = " " * indent
    shallowest = 1 + _JOINED_DEPTH * len(step)  # the margin of items at that depth

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
                if flush is not None:  # streamed: no piece is taken back, so none is kept
                    append(separator)
                    write(entry, inner)
                    if len(parts) >= _CHUNK_PIECES:
                        flush("".join(parts))
                        parts.clear()
                    if consume and shallow and kind is list:
                        item[index] = None
                elif shallow:
                    mark = len(parts)
                    append(separator)
                    try:
                        write(entry, inner)
                    except _Other:  # json.dumps writes this item, at this depth: the same bytes
                        del parts[mark + 1:]
                        append(json.dumps(entry, indent=indent, ensure_ascii=ensure_ascii).replace("\n", inner))
                    parts[mark:] = ["".join(parts[mark:])]
                    if consume and kind is list:
                        item[index] = None  # written: its memory goes back as its text grows
                else:
                    append(separator)
                    write(entry, inner)
                separator = "," + inner
            append(margin + "]")
        else:
            raise _Other

    try:
        write(value, "\n")
    except (_Other, RecursionError):
        if flush is not None:
            raise TypeError("a streamed JSON value is not plain JSON data, or is nested too deep") from None
        return [json.dumps(value, indent=indent, ensure_ascii=ensure_ascii) + end]
    append(end)
    return parts
