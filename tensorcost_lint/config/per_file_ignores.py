"""`per_file_ignores`: codes switched off for the files a glob names, as in ruff and flake8.

A glob from a config file is relative to that file's directory; one from `--per-file-ignores` is
relative to the working directory. A glob without a `/` also matches the file name alone
(`conftest.py`, `*_test.py`), as ruff's does.
"""

from __future__ import annotations

import fnmatch
import os

from ..rules.selection import check_selectors
from .errors import ConfigError


def parse_cli_entries(values, base: str) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """`--per-file-ignores 'tests/*:TCL401,TCL402'` (repeatable; several entries may share one
    value separated by spaces, flake8's spelling)."""
    entries = []
    for value in values:
        for entry in value.split():
            pattern, sep, codes = entry.rpartition(":")
            if not sep or not pattern or not codes.strip(","):
                raise ConfigError("--per-file-ignores", entry, "expected GLOB:CODES, e.g. tests/*:TCL401,TCL402")
            selectors = [c for c in codes.split(",") if c.strip()]
            entries.append((base, pattern, check_selectors(f"--per-file-ignores {entry}", "", selectors)))
    return tuple(entries)


def codes_ignored_for(path: str, entries) -> tuple[str, ...]:
    """Every code or prefix an entry whose glob matches `path` ignores."""
    if not entries:
        return ()
    absolute = os.path.abspath(path)
    name = os.path.basename(absolute)
    ignored: list[str] = []
    for base, pattern, codes in entries:
        relative = os.path.relpath(absolute, base).replace(os.sep, "/")
        if relative.startswith("../"):
            continue
        pattern = pattern.replace(os.sep, "/").removeprefix("./")
        if fnmatch.fnmatchcase(relative, pattern) or ("/" not in pattern and fnmatch.fnmatchcase(name, pattern)):
            ignored.extend(codes)
    return tuple(ignored)
