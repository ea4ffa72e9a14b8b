from __future__ import annotations


class ConfigError(Exception):
    """A user's file or flag is wrong: reported as one line `file: key: reason`, exit 2."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        self.source = source
        self.key = key
        self.reason = reason
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {reason}")
