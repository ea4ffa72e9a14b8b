from __future__ import annotations

import sys

from .output_files import write_file


def write_output(text: str, path: str | None, protected=()) -> None:
    """Write to stdout, or to `path` (an unwritable path, or one in `protected`, is a usage error,
    exit 2)."""
    if not path or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_file(path, text.encode("utf-8", "backslashreplace"), "--output", protected)
