"""Finding and reading the files to check: walking directories, excludes, encodings."""

from __future__ import annotations

import fnmatch
import io
import os
import tokenize
from .bounded_read import NotARegularFile, TooLarge, read_capped
from .gitignore import GitignoreRules

# Never walked into: VCS data, caches, virtual environments and build output.
SKIPPED_DIRECTORIES = frozenset({
    ".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox",
    ".venv", "venv", ".eggs", "node_modules", "build", "dist", "site-packages", ".ipynb_checkpoints",
    ".tensorcost_cache", ".ci-venv",
})
PYTHON_SUFFIXES = (".py", ".pyi")
MAX_SOURCE_BYTES = 64 << 20  # a generated 5 MB module is fine; /dev/zero under a .py name is not


def _excluded(path: str, patterns) -> bool:
    normalized = path.replace(os.sep, "/")
    parts = normalized.split("/")
    for pattern in patterns:
        if fnmatch.fnmatch(normalized, pattern) or fnmatch.fnmatch(parts[-1], pattern):
            return True
        if any(fnmatch.fnmatch(part, pattern) for part in parts):
            return True
        if fnmatch.fnmatch(normalized, f"*/{pattern}") or fnmatch.fnmatch(normalized, f"{pattern}/*"):
            return True
    return False


def discover(paths, exclude_for) -> tuple[list[str], list[str]]:
    """(python files to check, paths that do not exist). `exclude_for(path)` gives the exclude globs
    of the config governing a path; `.gitignore` rules apply too. Explicitly named files are
    always checked."""
    files: list[str] = []
    missing: list[str] = []
    seen: set = set()
    gitignore = GitignoreRules()
    for given in paths:
        if os.path.isfile(given):
            key = os.path.realpath(given)
            if key not in seen:
                seen.add(key)
                files.append(given)
            continue
        if not os.path.isdir(given):
            missing.append(given)
            continue
        patterns = exclude_for(given)
        for root, directories, names in os.walk(given):  # followlinks=False: symlink loops cannot hang
            directories[:] = sorted(
                d for d in directories
                if d not in SKIPPED_DIRECTORIES and not d.endswith(".egg-info")
                and not os.path.exists(os.path.join(root, d, "pyvenv.cfg"))
                and not _excluded(os.path.join(root, d), patterns)
                and not gitignore.ignored(os.path.join(root, d), True)
            )
            for name in sorted(names):
                if not name.endswith(PYTHON_SUFFIXES):
                    continue
                path = os.path.join(root, name)
                if _excluded(path, patterns) or not os.path.isfile(path) or gitignore.ignored(path, False):
                    continue  # FIFOs, devices and dangling links are no source files
                key = os.path.realpath(path)
                if key not in seen:
                    seen.add(key)
                    files.append(path)
    return files, missing


class UnreadableFile(Exception):
    pass


def read_source(path: str) -> str:
    """Text of a Python file, honouring a BOM and a PEP 263 coding cookie; CRLF kept as written."""
    try:
        raw = read_capped(path, MAX_SOURCE_BYTES)
    except (NotARegularFile, TooLarge) as error:
        raise UnreadableFile(f"cannot read file: {error}") from None
    except OSError as error:
        raise UnreadableFile(f"cannot read file: {error.strerror or error}") from None
    return decode_source(raw)


def decode_source(raw: bytes) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as error:
        raise UnreadableFile(f"cannot decode file: {error}") from None
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise UnreadableFile(f"cannot decode file as {encoding}: {error}") from None
    return text[1:] if text.startswith("\ufeff") else text
