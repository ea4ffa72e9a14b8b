"""Whole-model results of `check` in the result cache: a model's outcome depends on every file its
run read, so an entry records each of those files' content hash (and the listing of their
directories, so a file added where an import looks is seen too) and is believed only when all of
them still match. Entries are JSON in the per-file cache's directory, under the same link and
marker checks (`ResultCache`), and are checked field by field before use; anything wrong is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os

from ..safe_io.atomic_write import write_atomically
from ..safe_io.bounded_read import read_capped
from ..driver.cache import MAX_ENTRY_BYTES, tool_fingerprint
from .in_check import ContextSite, ModelOutcome

FORMAT = 1
_OUTCOME_FIELDS = {"name", "entry", "entry_path", "mode", "definition", "totals", "budgets", "sites", "files"}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_hash(path: str) -> str | None:
    try:
        return _sha(read_capped(path, MAX_ENTRY_BYTES * 4))
    except OSError:
        return None


def _listing_hash(directory: str) -> str | None:
    try:
        return _sha("\0".join(sorted(os.listdir(directory))).encode("utf-8", "surrogateescape"))
    except OSError:
        return None


def _dependencies(files: list) -> dict:
    return {"files": {path: _file_hash(path) for path in files},
            "dirs": {directory: _listing_hash(directory) for directory in sorted({os.path.dirname(p) for p in files})}}


class ModelCache:
    """`get`/`put` of ModelOutcomes beside a ResultCache's per-file entries."""

    def __init__(self, result_cache) -> None:
        self.cache = result_cache

    def _key(self, entry, config) -> str:
        digest = hashlib.sha256()
        for part in ("model", tool_fingerprint(), config.fingerprint_text, repr(entry), repr(sorted(config.cli_dims.items()))):
            digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
        return digest.hexdigest()

    def get(self, entry, config) -> ModelOutcome | None:
        key = self._key(entry, config)
        target = self.cache._file(key)
        if not self.cache._trusted(target.parent):
            return None
        try:
            document = json.loads(read_capped(target, MAX_ENTRY_BYTES, follow_symlinks=False))
            if not isinstance(document, dict) or document.get("format") != FORMAT or document.get("key") != key:
                return None
            outcome = _decode(document["outcome"])
            if document["depends"] != _dependencies(outcome.files):
                return None  # a file the run read (or a directory it looked in) changed
            return outcome
        except Exception:  # noqa: BLE001 - absent, planted, stale or malformed: run the model afresh
            return None

    def put(self, entry, config, outcome: ModelOutcome) -> None:
        key = self._key(entry, config)
        document = {"format": FORMAT, "key": key, "outcome": _encode(outcome),
                    "depends": _dependencies(outcome.files)}
        try:
            # in the run's own key order: a warm report must be byte-identical to a fresh one, and
            # JSON objects read back keep the order they were written in
            payload = json.dumps(document, separators=(",", ":")).encode("utf-8")
        except (TypeError, ValueError):
            return  # not plain data: not cached (the run's result is used as it is)
        if len(payload) > MAX_ENTRY_BYTES:
            return
        target = self.cache._file(key)
        try:
            if not self.cache._trusted(target.parent) or not self.cache._write_markers():
                return
            target.parent.mkdir(parents=True, exist_ok=True)
            if self.cache._trusted(target.parent):
                write_atomically(target, payload, mode=0o644)
        except OSError:
            pass


def _encode(outcome: ModelOutcome) -> dict:
    return {"name": outcome.name, "entry": outcome.entry, "entry_path": outcome.entry_path, "mode": outcome.mode,
            "definition": list(outcome.definition) if outcome.definition else None, "totals": outcome.totals,
            "budgets": outcome.budgets, "files": outcome.files,
            "sites": [{"path": s.path, "line": s.line, "column": s.column, "record": s.record, "context": s.context,
                       "findings": s.findings} for s in outcome.sites]}


_PHASES = ("forward", "backward", "optimizer")  # totals.memory.peak_phase (Contract 9)


def _int(value, low: int = 0) -> bool:
    return type(value) is int and low <= value <= 2**63 - 1


def _require(condition: bool) -> None:
    if not condition:  # a raise, not an assertion: the checks must hold under `python -O` too
        raise ValueError("invalid model cache entry")


def _decode(data) -> ModelOutcome:
    from ..driver.cache_entries import checked_finding, checked_site

    _require(isinstance(data, dict) and set(data) == _OUTCOME_FIELDS)
    _require(all(isinstance(data[k], str) for k in ("name", "entry", "entry_path", "mode")))
    definition = data["definition"]
    _require(definition is None or (isinstance(definition, list) and len(definition) == 2
                                    and all(_int(v, 1) for v in definition)))
    totals = data["totals"]
    _require(isinstance(totals, dict) and all(
        v is None or (v in _PHASES if k == "memory_peak_phase"
                      else isinstance(v, str) and len(v) < 100 if k == "lower_bound_seconds" else _int(v))
        for k, v in totals.items()))
    _require(isinstance(data["budgets"], dict)
             and all(v is None or type(v) in (int, str) for v in data["budgets"].values()))
    _require(isinstance(data["files"], list) and all(isinstance(p, str) and os.path.isabs(p) for p in data["files"]))
    sites = []
    for item in data["sites"]:
        path = item["path"]
        _require(isinstance(path, str) and _int(item["line"], 1) and _int(item["column"], 1))
        checked_site({**item["record"], "id": 0, "path": path}, path)
        context = item["context"]
        _require(isinstance(context, dict) and set(context) == {"model", "modules", "executions"})
        _require(isinstance(context["model"], str) and isinstance(context["modules"], list))
        _require(all(isinstance(m, str) for m in context["modules"])
                 and (context["executions"] is None or _int(context["executions"])))
        for found in item["findings"]:
            checked_finding({**found, "path": path, "site": None, "fix": None}, path)
        sites.append(ContextSite(path, item["line"], item["column"], dict(item["record"]), context, list(item["findings"])))
    return ModelOutcome(data["name"], data["entry"], data["entry_path"], data["mode"],
                        tuple(definition) if definition else None, totals, data["budgets"], sites, list(data["files"]))


