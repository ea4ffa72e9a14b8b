"""Typed refusals of the cost model: one class per trap, each naming the offending field.

Every refusal happens before any number is reported, so a caller can turn the exception into one
line (`field: reason`) for the user without a traceback.
"""

from __future__ import annotations


class EstimatorError(ValueError):
    """Base of every refusal; `field` names the offending input (dotted path), `reason` says why."""

    trap = "invalid input"

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class InvalidRecord(EstimatorError):
    """A record got a value of the wrong type (or a duck-typed look-alike of a record)."""

    trap = "invalid record"


class InvalidShape(EstimatorError):
    trap = "invalid shape"


class CountOverflow(EstimatorError):
    """A product of counts would exceed 2**63-1; it is refused, never wrapped or rounded."""

    trap = "count overflow"


class UnknownDtype(EstimatorError):
    trap = "unknown dtype"


class ContractionMismatch(EstimatorError):
    trap = "contraction mismatch"


class BroadcastRefused(EstimatorError):
    trap = "implicit broadcast"


class NarrowingAccumulation(EstimatorError):
    trap = "narrowing accumulation"


class IncompatibleAccumulation(EstimatorError):
    trap = "incompatible accumulation"


class EvidenceMismatch(EstimatorError):
    trap = "mismatched hardware evidence"


class DuplicateTensor(EstimatorError):
    trap = "duplicate tensor identity"


class AmbiguousLiveness(EstimatorError):
    trap = "ambiguous liveness"


class UnownedTraffic(EstimatorError):
    trap = "unowned traffic"


class EinsumError(EstimatorError):
    trap = "einsum contract error"
