"""Byte sizes as users write them in budgets: `268435456`, `256MiB`, `1GiB`, `1.5GB`."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "pb": 10**15,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "pib": 2**50,
    "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
}
_PATTERN = re.compile(r"\s*([0-9][0-9_]*(?:\.[0-9]+)?)\s*([A-Za-z]{0,3})\s*")


def parse_byte_size(value: object) -> int:
    """Exact integer bytes; raises ValueError with a reason a user can act on."""
    if isinstance(value, bool):
        raise ValueError(f"expected a byte size like 256MiB, got {value!r}")
    if isinstance(value, int):
        size = value
    elif isinstance(value, str) and len(value) <= 64:
        match = _PATTERN.fullmatch(value)
        if not match or match.group(2).lower() not in _UNITS:
            raise ValueError(f"expected a byte size like 256MiB, 1GiB or 1.5GB, got {value!r}")
        try:
            number = Decimal(match.group(1).replace("_", ""))
        except InvalidOperation:
            raise ValueError(f"expected a byte size like 256MiB, got {value!r}") from None
        scaled = number * _UNITS[match.group(2).lower()]
        if scaled != scaled.to_integral_value():
            raise ValueError(f"{value!r} is not a whole number of bytes")
        size = int(scaled)
    else:
        raise ValueError(f"expected a byte size like 256MiB, got {value!r}")
    if size <= 0:
        raise ValueError(f"must be positive, got {value!r}")
    if size > 2**63 - 1:
        raise ValueError(f"count overflow: {value!r} exceeds 2**63-1 bytes")
    return size
