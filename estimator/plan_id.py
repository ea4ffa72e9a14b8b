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


_FIELD_NAMES: dict = {}  # dataclass type -> its field names (`fields()` per value was most of an id's time)


def _canonical(value):
    kind = type(value)
    if value is None or kind is int or kind is str or kind is bool:
        return value
    if kind is tuple:
        return [_canonical(item) for item in value]
    if kind is DType:
        return value.name
    if kind is Decimal:
        return "decimal:" + format(value.normalize(), "E")
    names = _FIELD_NAMES.get(kind)
    if names is None and is_dataclass(value):
        names = tuple(f.name for f in fields(value))
        if not isinstance(value, type):  # a dataclass itself, not an instance, is not keyed by its type
            _FIELD_NAMES[kind] = names
    if names is not None:
        return {name: _canonical(getattr(value, name)) for name in names}
    raise TypeError(f"no canonical form for {kind.__name__}")


def plan_id(plan) -> str:
    payload = json.dumps(
        {"kind": type(plan).__name__, "fields": _canonical(plan)},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    )
    return hashlib.sha256(payload.encode("ascii")).hexdigest()[:20]
