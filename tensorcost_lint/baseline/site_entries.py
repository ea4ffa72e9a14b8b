"""One site entry of a baseline file (Contract 8): its identity and exact costs, read strictly.
Shared by the `sites` list (document) and each model's `sites` (model_document)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from .identity import SiteKey

MAX_COUNT = 2**63 - 1
_SITE_KEYS = {"path", "qualname", "expression", "occurrence", "flops", "output_bytes", "traffic_bytes",
              "lower_bound_seconds"}
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]+)?(E[+-]?[0-9]+)?")


@dataclass(frozen=True)
class SiteCosts:
    flops: int
    output_bytes: int
    traffic_bytes: int
    lower_bound_seconds: Decimal | None

    def value(self, metric: str):
        return getattr(self, metric)


def encoded_site(key: SiteKey, costs: SiteCosts) -> dict:
    """The entry `_site` reads back: identity, exact counts, the bound as a decimal string."""
    bound = costs.lower_bound_seconds
    return {"path": key.path, "qualname": key.qualname, "expression": key.expression,
            "occurrence": key.occurrence, "flops": costs.flops, "output_bytes": costs.output_bytes,
            "traffic_bytes": costs.traffic_bytes, "lower_bound_seconds": None if bound is None else str(bound)}


def _count(value) -> bool:
    return type(value) is int and 0 <= value <= MAX_COUNT


def _site(entry, refuse) -> tuple[SiteKey, SiteCosts]:
    if not isinstance(entry, dict) or set(entry) != _SITE_KEYS:
        raise refuse(f"expected the keys {', '.join(sorted(_SITE_KEYS))}")
    if not all(isinstance(entry[k], str) and 0 < len(entry[k]) <= 10_000 for k in ("path", "qualname", "expression")):
        raise refuse("path, qualname and expression must be non-empty strings")
    if not all(_count(entry[k]) for k in ("occurrence", "flops", "output_bytes", "traffic_bytes")):
        raise refuse("occurrence, flops, output_bytes and traffic_bytes must be integers in 0..2**63-1")
    bound = entry["lower_bound_seconds"]
    if bound is not None:
        if not isinstance(bound, str) or len(bound) > 100 or not _DECIMAL.fullmatch(bound):
            raise refuse("lower_bound_seconds must be null or a decimal string")
        try:
            bound = Decimal(bound)
        except InvalidOperation:
            raise refuse("lower_bound_seconds must be null or a decimal string") from None
    key = SiteKey(entry["path"], entry["qualname"], entry["expression"], entry["occurrence"])
    return key, SiteCosts(entry["flops"], entry["output_bytes"], entry["traffic_bytes"], bound)
