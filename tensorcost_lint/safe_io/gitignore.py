"""`.gitignore` rules while walking a directory, as git applies them (via `pathspec`).

A file is ignored by the deepest `.gitignore` (or `.git/info/exclude`) with an opinion on it:
each file's patterns are relative to its own directory, and a deeper `!pattern` re-includes what
a shallower one ignored. The `.gitignore` files from the repository root (the nearest directory
holding `.git`) down to the walked directory count too, so `tensorcost check src/` honours the
root's `build/`. Files named explicitly on the command line are always checked, as in ruff.
"""

from __future__ import annotations

import os

import pathspec

from .bounded_read import read_capped

MAX_IGNORE_FILE_BYTES = 1 << 20
MAX_IGNORE_PATTERNS = 10_000  # each path is matched against every pattern: a hostile file stays cheap


def _spec(path: str):
    try:
        raw = read_capped(path, MAX_IGNORE_FILE_BYTES)
    except OSError:
        return None  # absent, a FIFO, too large: no rules rather than a hang
    lines = [line for line in raw.decode("utf-8", "replace").splitlines()
             if line.strip() and not line.startswith("#")][:MAX_IGNORE_PATTERNS]
    return pathspec.GitIgnoreSpec.from_lines(lines) if any(line.strip() for line in lines) else None


def _repository_root(directory: str) -> str | None:
    for candidate in (directory, *_parents(directory)):
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
    return None


def _parents(directory: str):
    while True:
        parent = os.path.dirname(directory)
        if parent == directory:
            return
        yield parent
        directory = parent


class GitignoreRules:
    """Rules per directory, built once per directory while walking."""

    def __init__(self) -> None:
        self._by_directory: dict[str, tuple] = {}  # absolute dir -> ((base dir, spec), ...)

    def rules_for(self, directory: str) -> tuple:
        directory = os.path.abspath(directory)
        known = self._by_directory.get(directory)
        if known is not None:
            return known
        root = _repository_root(directory)
        if root is None:
            rules: tuple = ()
        elif directory == root:
            own = [_spec(os.path.join(root, ".git", "info", "exclude")), _spec(os.path.join(root, ".gitignore"))]
            rules = tuple((root, spec) for spec in own if spec is not None)
        else:
            spec = _spec(os.path.join(directory, ".gitignore"))
            rules = self.rules_for(os.path.dirname(directory)) + (((directory, spec),) if spec is not None else ())
        self._by_directory[directory] = rules
        return rules

    def ignored(self, path: str, is_directory: bool) -> bool:
        absolute = os.path.abspath(path)
        verdict = False
        for base, spec in self.rules_for(os.path.dirname(absolute)):
            relative = os.path.relpath(absolute, base).replace(os.sep, "/")
            if is_directory:
                relative += "/"
            include = spec.check_file(relative).include
            if include is not None:
                verdict = include
        return verdict
