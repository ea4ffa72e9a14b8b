"""Attention forward plans in two forms: materialized scores and fused (FlashAttention-style).

FLOPs are the same in both forms (its two matmuls: QKᵀ and PV; softmax is not counted). What
differs is memory traffic: a materialized implementation writes the [b,h,sq,sk] scores, reads them
for the softmax, writes the probabilities and reads them again for PV — Θ(s²) bytes — while a fused
kernel reads Q, K, V once and writes O once, keeping only O(b·h·sq) softmax statistics. That IO
difference, not FLOPs, is why fused attention is faster; these plans put numbers on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .contraction import accumulation_check
from .counting import checked_product, checked_sum
from .dtypes import DTYPES, DType, safe_accumulator
from .errors import ContractionMismatch, DuplicateTensor, InvalidRecord
from .records import (
    FLOP_CONVENTIONS,
    ExecutionPolicy,
    HardwareEvidence,
    Owners,
    TensorSpec,
    TrafficModel,
    require_choice,
    require_text,
    require_type,
)

ATTENTION_FORMS = ("materialized", "fused")


@dataclass(frozen=True, slots=True)
class AttentionPlan:
    """q [b,h,sq,d], k [b,hk,sk,d], v [b,hk,sk,dv] → o [b,h,sq,dv]; hk divides h (GQA/MQA)."""

    operation: str
    form: str
    query: TensorSpec
    key: TensorSpec
    value: TensorSpec
    output_dtype: DType
    score_dtype: DType
    training: bool = False
    causal: bool = False  # a causal mask: only the unmasked scores have to be computed
    accumulation_dtype: DType | None = None
    operation_class: str = "dense-matmul"
    flop_convention: str = "fma-2"
    execution: ExecutionPolicy = ExecutionPolicy()
    traffic: TrafficModel = TrafficModel("hbm-to-compute", "unassigned")
    hardware: HardwareEvidence | None = None
    owners: Owners = Owners()

    def __post_init__(self) -> None:
        require_text(self.operation, "operation")
        require_choice(self.form, ATTENTION_FORMS, "form")
        for field in ("query", "key", "value"):
            tensor = require_type(getattr(self, field), TensorSpec, field)
            if len(tensor.shape) != 4:
                raise InvalidRecord(f"{field}.shape", f"attention operands are [b, h, s, d], got rank {len(tensor.shape)}")
        require_type(self.output_dtype, DType, "output_dtype")
        require_type(self.score_dtype, DType, "score_dtype")
        require_type(self.training, bool, "training")
        require_type(self.causal, bool, "causal")
        require_choice(self.flop_convention, tuple(FLOP_CONVENTIONS), "flop_convention")
        require_type(self.execution, ExecutionPolicy, "execution")
        require_type(self.traffic, TrafficModel, "traffic")
        if self.hardware is not None:
            require_type(self.hardware, HardwareEvidence, "hardware")
        names = [self.query.name, self.key.name, self.value.name]
        if len(set(names)) != 3:
            raise DuplicateTensor("inputs", "query, key and value need distinct names")
        if len({self.query.dtype, self.key.dtype, self.value.dtype}) != 1:
            raise InvalidRecord("inputs", "query, key and value have different dtypes")
        b, h, _, d = self.query.shape
        kb, kh, sk, kd = self.key.shape
        vb, vh, vs, _ = self.value.shape
        if kb != b or vb != b:
            raise ContractionMismatch("key.shape", f"batch {kb}/{vb} differs from the query's {b}")
        if kd != d:
            raise ContractionMismatch("key.shape", f"key head dim {kd} differs from the query's {d}")
        if vh != kh or vs != sk:
            raise ContractionMismatch("value.shape", "value heads/length differ from the key's")
        if h % kh:
            raise ContractionMismatch("key.shape", f"{kh} key heads do not divide {h} query heads")
        accumulation_check(self.operand_dtype, self.accumulation)
        self.totals()  # refuses count overflow at construction

    def totals(self) -> tuple[int, int, int, int]:
        """(flops, traffic bytes, output bytes, retained bytes), all executions included."""
        count = self.execution.count
        per_execution = checked_sum((size for _, size in self.traffic_terms()), "traffic_bytes")
        traffic = checked_product((per_execution, count), "traffic_bytes")
        retained = checked_product((self.retained_per_copy(), self.execution.retained_copies), "retained_bytes")
        return self.flops(), traffic, self.output.bytes, retained

    @property
    def operand_dtype(self) -> DType:
        return self.query.dtype

    @property
    def accumulation(self) -> DType:
        return self.accumulation_dtype or safe_accumulator(self.operand_dtype)

    @property
    def output(self) -> TensorSpec:
        b, h, sq, _ = self.query.shape
        return TensorSpec("output", (b, h, sq, self.value.shape[3]), self.output_dtype)

    @property
    def scores_elements(self) -> int:
        b, h, sq, _ = self.query.shape
        return checked_product((b, h, sq, self.key.shape[2]), "scores")

    @property
    def scores_bytes(self) -> int:
        return checked_product((self.scores_elements, self.score_dtype.bytes), "scores")

    def score_entries(self) -> int:
        """Score entries per (batch, head) that must be computed. A causal mask (torch SDPA and
        jax.nn.dot_product_attention align it top-left: query i sees keys 0..i) leaves
        sum_i min(i+1, sk) of them — what a fused causal kernel has to do at the least, so the
        bound stays a bound."""
        sq, sk = self.query.shape[2], self.key.shape[2]
        if not self.causal:
            return checked_product((sq, sk), "scores")
        if sq <= sk:
            return sq * (sq + 1) // 2
        return sk * (sk + 1) // 2 + (sq - sk) * sk

    def flops(self) -> int:
        b, h, _, d = self.query.shape
        dv = self.value.shape[3]
        per_fma = FLOP_CONVENTIONS[self.flop_convention]
        entries = self.score_entries()
        scores = checked_product((per_fma, b, h, entries, d), "flops")
        weighted = checked_product((per_fma, b, h, entries, dv), "flops")
        return checked_product((checked_sum((scores, weighted), "flops"), self.execution.count), "flops")

    def statistics_bytes(self) -> int:
        """Fused kernels keep one fp32 log-sum-exp per query row for backward."""
        b, h, sq, _ = self.query.shape
        return checked_product((b, h, sq, DTYPES["float32"].bytes), "statistics")

    def traffic_terms(self) -> tuple[tuple[str, int], ...]:
        """(what, bytes per execution) crossing the boundary."""
        terms = [
            ("read query", self.query.bytes * self.query.accesses),
            ("read key", self.key.bytes * self.key.accesses),
            ("read value", self.value.bytes * self.value.accesses),
            ("write output", self.output.bytes),
        ]
        if self.form == "materialized":
            terms += [
                ("write scores", self.scores_bytes),
                ("read scores (softmax)", self.scores_bytes),
                ("write probabilities", self.scores_bytes),
                ("read probabilities (PV)", self.scores_bytes),
            ]
        elif self.training:
            terms.append(("write log-sum-exp", self.statistics_bytes()))
        return tuple(terms)

    def retained_per_copy(self) -> int:
        """Output, plus what backward needs: probabilities (materialized) or statistics (fused)."""
        kept = self.output.bytes
        if self.training:
            kept += self.scores_bytes if self.form == "materialized" else self.statistics_bytes()
        return kept
