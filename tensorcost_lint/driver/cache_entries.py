"""What a result-cache entry holds, and the checks it must pass before it is believed.

A cache directory can be stale, copied, hand-edited or planted in a cloned repository. An entry is
used only when all of this holds, and is otherwise a miss (the file is linted afresh):

- it names the key it is stored under, the running tool's fingerprint (tool code, Python, LibCST),
  the file's path and the sha256 of the file's content — so an entry copied to another key, left by
  another interpreter or version, or written for other content, is never served;
- its `digest` is the sha256 of its key and its result: an entry edited by hand (`findings: []`)
  no longer matches;
- its result has exactly the shape a fresh run writes (every field, every type, positions >= 1,
  known severities and code syntax): a malformed entry cannot crash or inject into the outputs.

The result is the whole per-file record a fresh run makes — findings with their fixes, every site
record with every field, whether the prefilter skipped the file — and is served back in the order a
fresh run writes it (site record fields in `site_record`'s order, whatever order the file holds), so a
cached run prints byte for byte what a fresh one prints, in every format and for `--fix`/`--diff`.

Size is capped by the reader (`cache.MAX_ENTRY_BYTES`). The digest is not a signature: whoever can
write the cache directory and recompute a sha256 can forge an entry, as they could edit the source.
"""

from __future__ import annotations

import hashlib
import json
import re

from ..rules.findings import SEVERITIES, Finding, Fix

ENTRY_FORMAT = 4  # 3: site records carry lower_bound_seconds_exact; 4: findings carry their fix
_CODE = re.compile(r"[A-Z]{1,10}[0-9]{1,5}")
_FINDING_FIELDS = ("path", "line", "column", "code", "severity", "message", "site", "end_line", "end_column", "fix")
_FIX_FIELDS = ("description", "line", "column", "end_line", "end_column", "replacement")

# The fields of `formats.site_records.site_record`, in its order, each with the JSON types it may hold.
_INT, _STR, _NONE, _BOOL, _FLOAT = (int,), (str,), (type(None),), (bool,), (float, int)
SITE_FIELDS = {
    "id": _INT, "path": _STR, "line": _INT, "column": _INT, "end_line": _INT + _NONE, "end_column": _INT + _NONE,
    "operation": _STR, "framework": _STR + _NONE, "function": _STR + _NONE, "expression": _STR + _NONE,
    "operands": (list,), "output": (dict,) + _NONE, "resolved": _BOOL, "reason": _STR + _NONE,
    "flops": _INT + _NONE, "flops_formula": _STR + _NONE, "output_bytes": _INT + _NONE,
    "traffic_bytes": _INT + _NONE, "retained_bytes": _INT + _NONE, "arithmetic_intensity": _FLOAT + _NONE,
    "lower_bound_seconds": _FLOAT + _NONE, "lower_bound_seconds_exact": _STR + _NONE, "bottleneck": _STR + _NONE,
    "bound_reason": _STR + _NONE, "accumulation_dtype": _STR + _NONE, "hardware": _STR + _NONE, "plan_id": _STR + _NONE,
}
EXECUTION_FIELDS = {"framework": _STR, "description": _STR, "path": (list,) + _NONE, "flops": _INT + _NONE}
_TENSOR_FIELDS = ("shape", "dtype")  # an operand's or the output's record


class InvalidEntry(ValueError):
    pass


def _canonical(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def entry_digest(key: str, result: dict) -> str:
    return hashlib.sha256(key.encode("ascii") + b"\0" + _canonical(result)).hexdigest()


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def finding_entry(finding: Finding) -> dict:
    """A finding as the entry stores it, its fix included (`--fix`, `--diff` and the editor need it)."""
    fix = finding.fix
    return {"path": finding.path, "line": finding.line, "column": finding.column, "code": finding.code,
            "severity": finding.severity, "message": finding.message, "site": finding.site,
            "end_line": finding.end_line, "end_column": finding.end_column,
            "fix": None if fix is None else {name: getattr(fix, name) for name in _FIX_FIELDS}}


def encode_entry(*, key: str, tool: str, path: str, text: str, findings: list, sites: list, skipped: bool) -> bytes:
    """`findings`: `Finding`s; `sites`: the result's site records (`LintResult.records()`)."""
    result = {"findings": [finding_entry(f) for f in findings], "sites": sites, "skipped": skipped}
    return _canonical({"format": ENTRY_FORMAT, "key": key, "tool": tool, "path": path,
                       "content_sha256": content_hash(text), "result": result, "digest": entry_digest(key, result)})


def decode_entry(raw: bytes, *, key: str, tool: str, path: str, text: str) -> tuple[list, list, bool]:
    """(findings, site records, skipped) of a valid entry for exactly this key; InvalidEntry else."""
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError) as error:
        raise InvalidEntry(f"not JSON: {error}") from None
    _require(isinstance(entry, dict) and set(entry) == {"format", "key", "tool", "path", "content_sha256",
                                                         "result", "digest"}, "not an entry")
    _require(entry["format"] == ENTRY_FORMAT and entry["key"] == key and entry["tool"] == tool
             and entry["path"] == path and entry["content_sha256"] == content_hash(text), "made for another key")
    result = entry["result"]
    _require(isinstance(result, dict) and set(result) == {"findings", "sites", "skipped"}, "no result")
    _require(entry["digest"] == entry_digest(key, result), "digest does not match (edited)")
    _require(type(result["skipped"]) is bool and isinstance(result["findings"], list)
             and isinstance(result["sites"], list), "result fields")
    findings = [checked_finding(item, path) for item in result["findings"]]
    records = [checked_site(record, path) for record in result["sites"]]
    return findings, records, result["skipped"]


def _require(condition: bool, reason: str) -> None:
    if not condition:
        raise InvalidEntry(reason)


def _is(value, types) -> bool:
    if type(value) is bool:  # JSON true is no line number
        return bool in types
    return isinstance(value, types)


def _position(value, optional: bool = False) -> bool:
    return (optional and value is None) or (type(value) is int and 1 <= value <= 2**63 - 1)


def checked_finding(item, path: str) -> Finding:
    _require(isinstance(item, dict) and set(item) == set(_FINDING_FIELDS), "finding fields")
    _require(item["path"] == path and _position(item["line"]) and _position(item["column"])
             and _position(item["end_line"], True) and _position(item["end_column"], True), "finding position")
    _require(isinstance(item["code"], str) and _CODE.fullmatch(item["code"]) is not None, "finding code")
    _require(item["severity"] in SEVERITIES and isinstance(item["message"], str), "finding severity or message")
    _require(item["site"] is None or (type(item["site"]) is int and item["site"] >= 0), "finding site")
    return Finding(**{**item, "fix": _fix(item["fix"])})


def _fix(item) -> Fix | None:
    if item is None:
        return None
    _require(isinstance(item, dict) and set(item) == set(_FIX_FIELDS), "fix fields")
    _require(all(_position(item[name]) for name in ("line", "column", "end_line", "end_column"))
             and (item["line"], item["column"]) <= (item["end_line"], item["end_column"]), "fix position")
    _require(isinstance(item["description"], str) and isinstance(item["replacement"], str), "fix text")
    return Fix(**item)


def _dims(shape) -> bool:
    return shape is None or (isinstance(shape, list) and all(_is(d, (int, str)) for d in shape))


def _tensor(item) -> dict:
    return {name: item[name] for name in _TENSOR_FIELDS}


def checked_site(record, path: str) -> dict:
    """The record checked, with its fields in `site_record`'s order (the entry's own order is not
    trusted: JSON output must not depend on how an entry was written)."""
    _require(isinstance(record, dict) and set(record) - {"execution"} == set(SITE_FIELDS), "site fields")
    _require(all(_is(record[name], types) for name, types in SITE_FIELDS.items()), "site field types")
    _require(record["path"] == path and _position(record["line"]) and _position(record["column"])
             and _position(record["end_line"], True) and _position(record["end_column"], True), "site position")
    for operand in record["operands"]:
        _require(isinstance(operand, dict) and set(operand) == set(_TENSOR_FIELDS) and _dims(operand["shape"])
                 and _is(operand["dtype"], _STR + _NONE), "site operand")
    output = record["output"]
    _require(output is None or (set(output) == set(_TENSOR_FIELDS) and _dims(output["shape"])
                                and _is(output["dtype"], _STR + _NONE)), "site output")
    ordered = {name: record[name] for name in SITE_FIELDS}
    ordered["operands"] = [_tensor(operand) for operand in record["operands"]]
    ordered["output"] = None if output is None else _tensor(output)
    if "execution" in record:
        execution = record["execution"]
        _require(isinstance(execution, dict) and set(execution) == set(EXECUTION_FIELDS)
                 and all(_is(execution[name], types) for name, types in EXECUTION_FIELDS.items()), "site execution")
        steps = execution["path"]
        _require(steps is None or all(isinstance(step, list) and all(type(i) is int for i in step) for step in steps),
                 "site execution path")
        ordered["execution"] = {name: execution[name] for name in EXECUTION_FIELDS}
    return ordered
