"""tensorcost's pure cost model: exact counts, checked plans, roofline lower bounds.

Standard library only; no LibCST, no YAML. Everything a caller needs is re-exported here.
"""

from .attention import ATTENTION_FORMS, AttentionPlan
from .contraction import PLAN_VERSION, Contraction, ContractionPlan, accumulation_check, contraction_plan
from .counting import MAX_COUNT, checked_product, checked_sum
from .dtypes import DTYPES, Accumulation, DType, classify_accumulation, lookup_dtype, normalize_dtype, safe_accumulator
from .einsum_subscripts import INDEX_LETTERS, EinsumSpec, bind_labels, parse_subscripts
from .errors import (
    AmbiguousLiveness,
    BroadcastRefused,
    ContractionMismatch,
    CountOverflow,
    DuplicateTensor,
    EinsumError,
    EstimatorError,
    EvidenceMismatch,
    IncompatibleAccumulation,
    InvalidRecord,
    InvalidShape,
    NarrowingAccumulation,
    UnknownDtype,
    UnownedTraffic,
)
from .estimate import COMPUTE, TRAFFIC, Estimate, estimate, find_evidence, require_evidence
from .matmul_shapes import MatmulShapes, analyse_matmul, check_broadcast_policy
from .plan_id import plan_id
from .records import (
    BROADCAST_POLICIES,
    FLOP_CONVENTIONS,
    LIVENESS_POLICIES,
    BandwidthEvidence,
    ComputeEvidence,
    ExecutionPolicy,
    HardwareEvidence,
    Owners,
    TensorSpec,
    TrafficModel,
)

__all__ = [name for name in dir() if not name.startswith("_")]
