"""Per-file result cache, ruff-style: `.tensorcost_cache/` keyed by content, config and version.

The key is sha256(tool fingerprint, config fingerprint, path, file content): any change to any of
them misses. The tool fingerprint covers the tool's own code, the Python that runs it and the
LibCST that parses (a 3.11 run caches E999 for PEP 695 syntax that 3.12 parses). Entries are JSON,
never pickle — a cache directory shipped inside a cloned repository must not be able to execute
code when read — and each is checked before it is believed (`cache_entries`).

A cache directory can be planted: `CACHEDIR.TAG -> ../../victim/notes.txt`. Nothing is ever written
through a link: a cache directory that is a link, holds a link (or anything but a plain file) where
its marker files belong, or has a linked shard directory is neither read nor written for the run.
Writes go to a fresh temporary file then `os.replace` (`atomic_write`), so concurrent runs
(pre-commit, editors, `--jobs`) never see a half-written entry and a failed write leaves nothing.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path

from .. import __version__
from ..safe_io.atomic_write import write_atomically
from ..safe_io.bounded_read import read_capped
from .cache_entries import ENTRY_FORMAT, InvalidEntry, decode_entry, encode_entry

CACHE_DIRECTORY_NAME = ".tensorcost_cache"
# A fresh entry for a large generated module is a few hundred KiB; a 300 MB planted one must not be
# read into memory (it cost 1.26 GB). A file of 33,000 small functions (1.1 MB) writes ~21 MB: under
# 16 MiB it was never cached and every run paid its full cost again.
MAX_ENTRY_BYTES = 32 << 20
# Past that, an entry may grow with the file it is for: a 100,000-statement forward (2.3 MB) writes
# ~70 MB, and a file that large costs more memory to lint afresh than its entry costs to read, so
# the bound still keeps a planted entry from costing more than the file itself would.
ENTRY_BYTES_PER_SOURCE_BYTE = 64


def entry_limit(text: str) -> int:
    """The largest entry read or written for a file of this text."""
    return MAX_ENTRY_BYTES + ENTRY_BYTES_PER_SOURCE_BYTE * len(text)
MARKERS = {
    ".gitignore": "# created by tensorcost\n*\n",
    "CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n# tensorcost result cache\n",
}

_TOOL_FINGERPRINT: list = []


def runtime_identity() -> str:
    """The interpreter and parser a result depends on besides the tool's own code."""
    try:
        from libcst._version import __version__ as libcst_version
    except ImportError:
        libcst_version = "absent"
    return f"python {sys.version} {sys.implementation.cache_tag}; libcst {libcst_version}"


def tool_fingerprint() -> str:
    """Version, Python and LibCST, plus the size and mtime of every module of the tool: an editable
    install whose code changed must not be served results its old code produced."""
    if not _TOOL_FINGERPRINT:
        import estimator
        import shape_annotations

        digest = hashlib.sha256(f"{__version__}\n{runtime_identity()}\n".encode())
        for package in (Path(__file__).parent, Path(estimator.__file__).parent, Path(shape_annotations.__file__).parent):
            for module in sorted(package.rglob("*.py")):
                info = module.stat()
                digest.update(f"{module}:{info.st_size}:{info.st_mtime_ns}\n".encode())
        _TOOL_FINGERPRINT.append(digest.hexdigest())
    return _TOOL_FINGERPRINT[0]


def _is_plain(path: Path, kind) -> bool | None:
    """True for an existing `kind` (S_ISDIR/S_ISREG) that is no link, None when absent."""
    try:
        return kind(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None
    except OSError:
        return False


class ResultCache:
    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = os.path.abspath(directory)
        self._root = Path(self.directory) / f"v{ENTRY_FORMAT}-{__version__}"
        self._refused = False  # a planted link was seen: off for the rest of the run

    @classmethod
    def default(cls) -> "ResultCache":
        return cls(os.environ.get("TENSORCOST_CACHE_DIR") or CACHE_DIRECTORY_NAME)

    def _key(self, text: str, path: str, config) -> str:
        digest = hashlib.sha256()
        for part in (tool_fingerprint(), config.fingerprint_text, path, text):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
        return digest.hexdigest()

    def _file(self, key: str) -> Path:
        return self._root / key[:2] / f"{key}.json"

    def get(self, text: str, path: str, config):
        from .engine import LintResult

        key = self._key(text, path, config)
        target = self._file(key)
        if not self._trusted(target.parent):
            return None
        try:
            raw = read_capped(target, entry_limit(text), follow_symlinks=False)
            findings, records, skipped = decode_entry(raw, key=key, tool=tool_fingerprint(), path=path, text=text)
        except (OSError, InvalidEntry):
            return None  # absent, planted, stale, edited or malformed: lint afresh, never fail the run
        return LintResult(path, findings=findings, skipped=skipped, site_records=records)

    def put(self, text: str, path: str, config, result) -> None:
        key = self._key(text, path, config)
        payload = encode_entry(key=key, tool=tool_fingerprint(), path=path, text=text, findings=result.findings,
                               sites=result.records(), skipped=result.skipped)
        if len(payload) > entry_limit(text):
            return  # it would be refused when read
        target = self._file(key)
        try:
            if not self._trusted(target.parent) or not self._write_markers():
                return
            target.parent.mkdir(parents=True, exist_ok=True)
            if not self._trusted(target.parent):  # a link planted while we looked
                return
            write_atomically(target, payload, mode=0o644)
        except OSError:
            pass  # a read-only checkout still lints, just without a cache

    def _trusted(self, directory: Path) -> bool:
        """No link and nothing but directories from the cache directory down to `directory`, and
        the markers are plain files or absent: so no read or write ever leaves the cache."""
        if self._refused:
            return False
        top = part = Path(self.directory)
        for name in ("", *directory.relative_to(top).parts):
            part = part / name if name else part
            if _is_plain(part, stat.S_ISDIR) is False:
                self._refused = True
                return False
        if any(_is_plain(top / name, stat.S_ISREG) is False for name in MARKERS):
            self._refused = True
            return False
        return True

    def _write_markers(self) -> bool:
        top = Path(self.directory)
        top.mkdir(parents=True, exist_ok=True)
        for name, content in MARKERS.items():
            present = _is_plain(top / name, stat.S_ISREG)
            if present is False:
                self._refused = True
                return False
            if present is None:
                write_atomically(top / name, content.encode("ascii"), mode=0o644)
        return True
