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

Size is capped by the reader (`cache.MAX_ENTRY_BYTES`). The digest is not a signature: whoever can
write the cache directory and recompute a sha256 can forge an entry, as they could edit the source.
"""

from __future__ import annotations

import hashlib
import json
import re

from .findings import SEVERITIES, Finding

ENTRY_FORMAT = 3  # 3: site records carry lower_bound_seconds_exact
_CODE = re.compile(r"[A-Z]{1,10}[0-9]{1,5}")
_FINDING_FIELDS = ("path", "line", "column", "code", "severity", "message", "site", "end_line", "end_column")

# The fields of `formats.site_records.site_record`, each with the JSON types it may hold.
_INT, _STR, _NONE, _BOOL, _FLOAT = (int,), (str,), (type(None),), (bool,), (float, int)
_SITE_FIELDS = {
    "id": _INT, "path": _STR, "line": _INT, "column": _INT, "end_line": _INT + _NONE, "end_column": _INT + _NONE,
    "operation": _STR, "framework": _STR + _NONE, "function": _STR + _NONE, "expression": _STR + _NONE,
    "operands": (list,), "output": (dict,) + _NONE, "resolved": _BOOL, "reason": _STR + _NONE,
    "flops": _INT + _NONE, "flops_formula": _STR + _NONE, "output_bytes": _INT + _NONE,
    "traffic_bytes": _INT + _NONE, "retained_bytes": _INT + _NONE, "arithmetic_intensity": _FLOAT + _NONE,
    "lower_bound_seconds": _FLOAT + _NONE, "lower_bound_seconds_exact": _STR + _NONE, "bottleneck": _STR + _NONE, "bound_reason": _STR + _NONE,
    "accumulation_dtype": _STR + _NONE, "hardware": _STR + _NONE, "plan_id": _STR + _NONE,
}
_EXECUTION_FIELDS = {"framework": _STR, "description": _STR, "path": (list,) + _NONE, "flops": _INT + _NONE}


class InvalidEntry(ValueError):
    pass


def _canonical(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def entry_digest(key: str, result: dict) -> str:
    return hashlib.sha256(key.encode("ascii") + b"\0" + _canonical(result)).hexdigest()


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def encode_entry(*, key: str, tool: str, path: str, text: str, findings: list, sites: list, skipped: bool) -> bytes:
    result = {"findings": findings, "sites": sites, "skipped": skipped}
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
    findings = [_finding(item, path) for item in result["findings"]]
    for record in result["sites"]:
        _check_site(record, path)
    return findings, result["sites"], result["skipped"]


def _require(condition: bool, reason: str) -> None:
    if not condition:
        raise InvalidEntry(reason)


def _is(value, types) -> bool:
    if type(value) is bool:  # JSON true is no line number
        return bool in types
    return isinstance(value, types)


def _position(value, optional: bool = False) -> bool:
    return (optional and value is None) or (type(value) is int and 1 <= value <= 2**63 - 1)


def _finding(item, path: str) -> Finding:
    _require(isinstance(item, dict) and set(item) == set(_FINDING_FIELDS), "finding fields")
    _require(item["path"] == path and _position(item["line"]) and _position(item["column"])
             and _position(item["end_line"], True) and _position(item["end_column"], True), "finding position")
    _require(isinstance(item["code"], str) and _CODE.fullmatch(item["code"]) is not None, "finding code")
    _require(item["severity"] in SEVERITIES and isinstance(item["message"], str), "finding severity or message")
    _require(item["site"] is None or (type(item["site"]) is int and item["site"] >= 0), "finding site")
    return Finding(**item)


def _dims(shape) -> bool:
    return shape is None or (isinstance(shape, list) and all(_is(d, (int, str)) for d in shape))


def _check_site(record, path: str) -> None:
    _require(isinstance(record, dict) and set(record) - {"execution"} == set(_SITE_FIELDS), "site fields")
    _require(all(_is(record[name], types) for name, types in _SITE_FIELDS.items()), "site field types")
    _require(record["path"] == path and _position(record["line"]) and _position(record["column"])
             and _position(record["end_line"], True) and _position(record["end_column"], True), "site position")
    for operand in record["operands"]:
        _require(isinstance(operand, dict) and set(operand) == {"shape", "dtype"} and _dims(operand["shape"])
                 and _is(operand["dtype"], _STR + _NONE), "site operand")
    output = record["output"]
    _require(output is None or (set(output) == {"shape", "dtype"} and _dims(output["shape"])
                                and _is(output["dtype"], _STR + _NONE)), "site output")
    if "execution" in record:
        execution = record["execution"]
        _require(isinstance(execution, dict) and set(execution) == set(_EXECUTION_FIELDS)
                 and all(_is(execution[name], types) for name, types in _EXECUTION_FIELDS.items()), "site execution")
        steps = execution["path"]
        _require(steps is None or all(isinstance(step, list) and all(type(i) is int for i in step) for step in steps),
                 "site execution path")
