"""Per-file result cache, ruff-style: `.tensorcost_cache/` keyed by content, config and version.

The key is sha256(tool version, config fingerprint, path, file content): any change to any of them
misses. Entries are JSON, never pickle — a cache directory shipped inside a cloned repository must not
be able to execute code when read. Writes go to a temporary file then `os.replace`, so concurrent runs
(pre-commit, editors, `--jobs`) never see a half-written entry; filenames are hex digests, so nothing
is ever written outside the cache directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from . import __version__
from .findings import Finding

CACHE_DIRECTORY_NAME = ".tensorcost_cache"
_FORMAT = 1


_TOOL_FINGERPRINT: list = []


def tool_fingerprint() -> str:
    """Version plus the size and mtime of every module of the tool: an editable install whose code
    changed must not be served results its old code produced."""
    if not _TOOL_FINGERPRINT:
        import estimator
        import shape_annotations

        digest = hashlib.sha256(__version__.encode())
        for package in (Path(__file__).parent, Path(estimator.__file__).parent, Path(shape_annotations.__file__).parent):
            for module in sorted(package.rglob("*.py")):
                stat = module.stat()
                digest.update(f"{module}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
        _TOOL_FINGERPRINT.append(digest.hexdigest())
    return _TOOL_FINGERPRINT[0]


class ResultCache:
    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = os.path.abspath(directory)
        self._root = Path(self.directory) / f"v{_FORMAT}-{__version__}"

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

        try:
            data = json.loads(self._file(self._key(text, path, config)).read_text(encoding="utf-8"))
            findings = [Finding(**{k: v for k, v in item.items() if k != "fix"}) for item in data["findings"]]
            result = LintResult(path, findings=findings, skipped=data["skipped"])
            result.site_records = data["sites"]
            return result
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent or unreadable: recompute, never fail the run

    def put(self, text: str, path: str, config, result) -> None:
        from .formats.site_records import site_record

        records = [site_record(s.site.id, path, s, config.default_dtype, config.hardware_id) for s in result.sites]
        findings = []
        for f in result.findings:
            findings.append({"path": f.path, "line": f.line, "column": f.column, "code": f.code,
                             "severity": f.severity, "message": f.message, "site": f.site,
                             "end_line": f.end_line, "end_column": f.end_column})
        payload = json.dumps({"findings": findings, "sites": records, "skipped": result.skipped})
        target = self._file(self._key(text, path, config))
        try:
            if not self._inside_real_directories(target.parent):
                return  # a symlinked cache directory (e.g. committed to a repository) is not written
            self._prepare()
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(payload)
            os.replace(temporary, target)
        except OSError:
            pass  # a read-only checkout still lints, just without a cache

    def _inside_real_directories(self, directory: Path) -> bool:
        """Every existing component from the cache directory down is a real directory, no link:
        so a write can never land outside the cache directory."""
        top = Path(self.directory)
        for part in (top, *(top / p for p in directory.relative_to(top).parts)):
            if os.path.islink(part) or (os.path.exists(part) and not os.path.isdir(part)):
                return False
        return True

    def _prepare(self) -> None:
        top = Path(self.directory)
        if (top / ".gitignore").exists():
            return
        top.mkdir(parents=True, exist_ok=True)
        (top / ".gitignore").write_text("# created by tensorcost\n*\n")
        (top / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n# tensorcost result cache\n")
