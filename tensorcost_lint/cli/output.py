from __future__ import annotations

import sys

from ..formats.indented_json import Streamed
from .output_files import write_file

_SLICE = 1 << 20


def write_output(text: str | list[str] | Streamed, path: str | None, protected=()) -> None:
    """Write to stdout, or to `path` (an unwritable path, or one in `protected`, is a usage error,
    exit 2). `text` may be a list of pieces (a large report: never joined on stdout), or a Streamed
    JSON text, written as it is made (never held whole, to stdout or to a file)."""
    if isinstance(text, Streamed):
        if not path or path == "-":
            text.write_to(_stdout_write)
            sys.stdout.flush()
        else:
            write_file(path, lambda stream: text.write_to(
                lambda piece: stream.write(piece.encode("utf-8", "backslashreplace"))), "--output", protected)
        return
    if not path or path == "-":
        for piece in ([text] if isinstance(text, str) else text):
            _stdout_write(piece)
        sys.stdout.flush()
        return
    text = text if isinstance(text, str) else "".join(text)
    write_file(path, text.encode("utf-8", "backslashreplace"), "--output", protected)


def _stdout_write(piece: str) -> None:
    # in slices: the stream encodes what it is given at once (a 100 MB report: 100 MB more)
    for start in range(0, len(piece), _SLICE):
        sys.stdout.write(piece[start:start + _SLICE])
