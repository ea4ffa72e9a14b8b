"""Hypothesis properties of the cost model and cross-checks against independent counters."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estimator import (
    AttentionPlan,
    BandwidthEvidence,
    ComputeEvidence,
    CountOverflow,
    ExecutionPolicy,
    HardwareEvidence,
    InvalidRecord,
    Owners,
    TensorSpec,
    TrafficModel,
    contraction_plan,
    estimate,
    normalize_dtype,
    plan_id,
)

F16, F32, BF16 = (normalize_dtype(n) for n in ("float16", "float32", "bfloat16"))
dims = st.integers(min_value=1, max_value=4096)


def bmm(b, m, k, n, dtype=F16, **kwargs):
    return contraction_plan(
        operation="bmm",
        operation_class="dense-matmul",
        inputs=(TensorSpec("a", (b, m, k), dtype), TensorSpec("b", (b, k, n), dtype)),
        output_name="c",
        output_dtype=dtype,
        **{"traffic": TrafficModel("hbm-to-compute", "perf"), **kwargs},
    )


@settings(max_examples=60, deadline=None)
@given(b=dims, m=dims, k=dims, n=dims, which=st.sampled_from("bmkn"))
def test_flops_are_linear_in_every_dim(b, m, k, n, which):
    base = estimate(bmm(b, m, k, n)).flops
    assert base == 2 * b * m * k * n
    doubled = dict(b=b, m=m, k=k, n=n)
    doubled[which] *= 2
    assert estimate(bmm(**doubled)).flops == 2 * base


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 64), h=st.integers(1, 64), s=st.integers(1, 4096), d=st.integers(1, 256))
def test_score_bytes_grow_four_times_when_s_doubles(b, h, s, d):
    def scores(seq):
        q = TensorSpec("q", (b * h, seq, d), F32)
        k = TensorSpec("kt", (b * h, d, seq), F32)
        plan = contraction_plan(operation="scores", operation_class="dense-matmul", inputs=(q, k),
                                output_name="s", output_dtype=F32, traffic=TrafficModel("hbm", "perf"))
        return estimate(plan).output_bytes

    assert scores(2 * s) == 4 * scores(s)


def _evidence(**overrides):
    fields = dict(id="dev", device="Device", source="datasheet", measured="2026-01-01", owner="perf",
                  compute=(ComputeEvidence("dense-matmul", F16, F32, "fma-2", Decimal("1e14")),),
                  bandwidth=(BandwidthEvidence("hbm-to-compute", Decimal("1e12")),))
    fields.update(overrides)
    return HardwareEvidence(**fields)


def _plan(**overrides):
    args = dict(execution=ExecutionPolicy(1, "serial-reuse", 1), hardware=_evidence(),
                owners=Owners((("shapes", "arch"),)))
    args.update(overrides)
    return bmm(8, 512, 64, 512, **args)


SINGLE_FIELD_CHANGES = {
    "shape": lambda: bmm(8, 512, 64, 256, hardware=_evidence(), owners=Owners((("shapes", "arch"),))),
    "dtype": lambda: bmm(8, 512, 64, 512, dtype=BF16, hardware=_evidence(), owners=Owners((("shapes", "arch"),))),
    "accumulation": lambda: _plan(accumulation_dtype=normalize_dtype("float64")),
    "policy": lambda: _plan(broadcast_policy="shared-weights"),
    "count": lambda: _plan(execution=ExecutionPolicy(2, "serial-reuse", 1)),
    "liveness": lambda: _plan(execution=ExecutionPolicy(1, "not-retained", 0)),
    "boundary": lambda: _plan(traffic=TrafficModel("l2-to-sm", "perf")),
    "traffic owner": lambda: _plan(traffic=TrafficModel("hbm-to-compute", "other")),
    "peak": lambda: _plan(hardware=_evidence(compute=(ComputeEvidence("dense-matmul", F16, F32, "fma-2", Decimal("2e14")),))),
    "measured date": lambda: _plan(hardware=_evidence(measured="2026-01-02")),
    "evidence source": lambda: _plan(hardware=_evidence(source="measured")),
    "owners": lambda: _plan(owners=Owners((("shapes", "someone-else"),))),
    "no hardware": lambda: _plan(hardware=None),
}


def test_plan_id_stable_for_equal_plans():
    assert plan_id(_plan()) == plan_id(_plan())
    assert estimate(_plan()).plan_id == plan_id(_plan())


@pytest.mark.parametrize("change", sorted(SINGLE_FIELD_CHANGES))
def test_plan_id_changes_with_any_single_field(change):
    assert plan_id(SINGLE_FIELD_CHANGES[change]()) != plan_id(_plan())


def test_records_refuse_duck_typed_look_alikes():
    class LooksLikeATuple(tuple):
        pass

    with pytest.raises(InvalidRecord):
        TensorSpec("a", LooksLikeATuple((1, 2)), F16)
    with pytest.raises(InvalidRecord):
        TensorSpec("a", (1, True), F16)
    fake_dtype = dataclasses.replace(F16)  # an equal copy is still a DType; a dict is not
    TensorSpec("a", (1,), fake_dtype)
    with pytest.raises(InvalidRecord):
        TensorSpec("a", (1,), {"name": "float16", "bytes": 2})
    with pytest.raises(dataclasses.FrozenInstanceError):
        TensorSpec("a", (1,), F16).shape = (2,)


def test_overflow_is_refused_not_wrapped():
    with pytest.raises(CountOverflow, match="count overflow"):
        bmm(2**20, 2**20, 2**20, 2**20)
    with pytest.raises(CountOverflow):
        bmm(2**20, 2**20, 2**20, 2**20, dtype=normalize_dtype("float64"))


def test_no_matching_evidence_gives_no_bound_with_reason():
    result = estimate(_plan(hardware=_evidence(bandwidth=())))
    assert result.lower_bound_seconds is None and result.bottleneck is None
    assert "bandwidth evidence for boundary hbm-to-compute" in result.bound_reason


def test_matmul_semantics_vector_promotion_and_shared_weights():
    vec = TensorSpec("v", (64,), F32)
    mat = TensorSpec("w", (64, 10), F32)
    plan = contraction_plan(operation="mv", operation_class="dense-matmul", inputs=(vec, mat),
                            output_name="o", output_dtype=F32)
    assert plan.output.shape == (10,) and estimate(plan).flops == 2 * 64 * 10
    x = TensorSpec("x", (8, 128, 64), F32)
    shared = contraction_plan(operation="proj", operation_class="dense-matmul", inputs=(x, mat),
                              output_name="y", output_dtype=F32, broadcast_policy="shared-weights")
    assert shared.output.shape == (8, 128, 10)
    assert estimate(shared).flops == 2 * 8 * 128 * 64 * 10
    dot = contraction_plan(operation="dot", operation_class="dense-matmul", inputs=(vec, TensorSpec("u", (64,), F32)),
                           output_name="s", output_dtype=F32)
    assert dot.output.shape == () and estimate(dot).flops == 128


def test_einsum_pair_plan_binds_letters_positionally():
    q = TensorSpec("q", (2, 4, 128, 32), BF16)
    k = TensorSpec("k", (2, 4, 256, 32), BF16)
    plan = contraction_plan(operation="scores", operation_class="dense-matmul", inputs=(q, k),
                            output_name="s", output_dtype=F32, subscripts="bhqd,bhkd->bhqk")
    assert plan.output.shape == (2, 4, 128, 256)
    assert estimate(plan).flops == 2 * 2 * 4 * 128 * 256 * 32
    outer = contraction_plan(operation="outer", operation_class="dense-matmul",
                             inputs=(TensorSpec("a", (5,), F32), TensorSpec("b", (7,), F32)),
                             output_name="o", output_dtype=F32, subscripts="i,j->ij")
    assert estimate(outer).flops == 35  # 1 per output element: no summed index


def test_attention_forms_put_numbers_on_the_flash_attention_io_argument():
    b, h, s, d = 4, 16, 4096, 64

    def plan(form, training=False):
        return AttentionPlan(
            operation="attn", form=form,
            query=TensorSpec("q", (b, h, s, d), BF16), key=TensorSpec("k", (b, h, s, d), BF16),
            value=TensorSpec("v", (b, h, s, d), BF16), output_dtype=BF16, score_dtype=BF16, training=training,
        )

    materialized, fused = estimate(plan("materialized")), estimate(plan("fused"))
    qkvo = 4 * b * h * s * d * 2
    scores = b * h * s * s * 2
    assert materialized.flops == fused.flops == 2 * (2 * b * h * s * s * d)
    assert fused.traffic_bytes == qkvo
    assert materialized.traffic_bytes == qkvo + 4 * scores
    assert materialized.traffic_bytes / fused.traffic_bytes > 30
    assert estimate(plan("materialized", True)).retained_bytes == b * h * s * d * 2 + scores
    assert estimate(plan("fused", True)).retained_bytes == b * h * s * d * 2 + b * h * s * 4


def test_flops_match_torch_flop_counter():
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    cases = [((8, 512, 64), (8, 64, 512)), ((128, 256), (256, 64)), ((3, 7, 5), (3, 5, 11))]
    for lhs, rhs in cases:
        a = torch.empty(lhs, device="meta")
        b = torch.empty(rhs, device="meta")
        with FlopCounterMode(display=False) as counter:
            torch.matmul(a, b)
        plan = contraction_plan(operation="mm", operation_class="dense-matmul",
                                inputs=(TensorSpec("a", lhs, F32), TensorSpec("b", rhs, F32)),
                                output_name="c", output_dtype=F32)
        assert estimate(plan).flops == counter.get_total_flops()


def test_flops_match_opt_einsum_cost():
    oe = pytest.importorskip("opt_einsum")
    for subscripts, shapes in [
        ("bmk,bkn->bmn", [(8, 512, 64), (8, 64, 512)]),
        ("bhqd,bhkd->bhqk", [(2, 8, 128, 64), (2, 8, 256, 64)]),
        ("ij,jk->ik", [(100, 30), (30, 7)]),
        ("i,j->ij", [(5,), (7,)]),
    ]:
        _, info = oe.contract_path(subscripts, *shapes, shapes=True)
        plan = contraction_plan(operation="e", operation_class="dense-matmul",
                                inputs=tuple(TensorSpec(f"t{i}", s, F32) for i, s in enumerate(shapes)),
                                output_name="o", output_dtype=F32, subscripts=subscripts)
        assert estimate(plan).flops == info.opt_cost
