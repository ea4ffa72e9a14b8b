"""Exact integer counting with an explicit ceiling.

Counts (elements, FLOPs, bytes) are Python ints, which never wrap; the ceiling of 2**63-1 exists
because every consumer downstream (JSON readers, SARIF tools, int64 kernels) does wrap or round.
"""

from __future__ import annotations

from typing import Iterable

from .errors import CountOverflow, EstimatorError, InvalidRecord

MAX_COUNT = 2**63 - 1


def check_count(value: int, field: str) -> int:
    if value > MAX_COUNT:
        raise CountOverflow(field, f"count overflow: {value} exceeds 2**63-1")
    return value


def checked_product(factors: Iterable[int], field: str) -> int:
    """Product of non-negative ints, refused as soon as a partial product passes the ceiling."""
    total = 1
    for factor in factors:
        total *= factor
        if total > MAX_COUNT:
            raise CountOverflow(field, "count overflow: product exceeds 2**63-1")
    return total


def checked_sum(terms: Iterable[int], field: str) -> int:
    total = 0
    for term in terms:
        total += term
        if total > MAX_COUNT:
            raise CountOverflow(field, "count overflow: sum exceeds 2**63-1")
    return total


def require_int(
    value: object, field: str, *, minimum: int = 1, error: type[EstimatorError] = InvalidRecord
) -> int:
    """An exact int (not bool, not float, not an int subclass) at least `minimum`, below the ceiling."""
    if type(value) is not int:
        raise InvalidRecord(field, f"expected an integer, got {type(value).__name__} {value!r}")
    if value < minimum:
        bound = "positive" if minimum == 1 else f">= {minimum}"
        raise error(field, f"must be {bound}, got {value}")
    return check_count(value, field)
