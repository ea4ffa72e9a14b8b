from __future__ import annotations

import sys
from pathlib import Path

from ..config.errors import ConfigError


def write_output(text: str, path: str | None) -> None:
    """Write to stdout, or to `path` (an unwritable path is a usage error, exit 2)."""
    if not path or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        raise ConfigError(path, "--output", f"cannot write: {error.strerror or error}") from None
