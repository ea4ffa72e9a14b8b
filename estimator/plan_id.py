"""A stable identity for a plan: sha256 over a canonical rendering of every bound field.

Canonical means: sorted keys, ints as ints, Decimals in normalised scientific text, dtypes by
canonical name — so the id is the same across processes, platforms and Python versions, and changes
when any shape, dtype, policy, count, boundary, evidence record, date or owner changes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields, is_dataclass
from decimal import Decimal

from .dtypes import DType


def _canonical(value):
    if type(value) is DType:
        return value.name
    if type(value) is Decimal:
        return "decimal:" + format(value.normalize(), "E")
    if is_dataclass(value):
        return {f.name: _canonical(getattr(value, f.name)) for f in fields(value)}
    if type(value) is tuple:
        return [_canonical(item) for item in value]
    if value is None or type(value) in (int, str, bool):
        return value
    raise TypeError(f"no canonical form for {type(value).__name__}")


def plan_id(plan) -> str:
    payload = json.dumps(
        {"kind": type(plan).__name__, "fields": _canonical(plan)},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    )
    return hashlib.sha256(payload.encode("ascii")).hexdigest()[:20]
