"""The pieces `measure` runs with, checked in-process: the BLAS-shaped pairwise contraction equals
np.einsum, workloads replay the modelled path, and small operands get enough cold copies."""

from __future__ import annotations

import itertools
import random

import pytest

from tensorcost_lint.measurement.measure_runs import MeasureSettings, _cold_operands
from tensorcost_lint.measurement.pairwise_contraction import pairwise_call, pairwise_contract
from tensorcost_lint.measurement.workloads import Step, Workload, label_sizes, step_output_shapes

np = pytest.importorskip("numpy")

PATTERNS = [
    ("ij,jk->ik", (3, 4), (4, 5)), ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5)), ("amk,kn->amn", (2, 3, 4), (4, 5)),
    ("ij,kl->ijlk", (2, 3), (4, 5)), ("ijx,jk->ki", (3, 4, 2), (4, 5)), ("bi,bi->b", (3, 4), (3, 4)),
    ("i,i->", (5,), (5,)), ("abc,cb->a", (2, 3, 4), (4, 3)), ("ab,b->a", (3, 4), (4,)),
    ("mk,kn->nm", (1, 4), (4, 5)), ("ii,ij->j", (3, 3), (3, 4)),
]


@pytest.mark.parametrize("subscripts, a_shape, b_shape", PATTERNS)
def test_pairwise_contraction_equals_einsum(subscripts, a_shape, b_shape):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    expected = np.einsum(subscripts, a, b)
    np.testing.assert_allclose(pairwise_contract(np, subscripts, a, b), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(pairwise_call(np, subscripts, a, b)(), expected, rtol=1e-12, atol=1e-12)


def test_pairwise_contraction_on_random_two_operand_einsums():
    rng = np.random.default_rng(1)
    chooser = random.Random(1)
    for _ in range(60):
        labels = "abcdef"
        a = "".join(chooser.sample(labels, chooser.randint(1, 4)))
        b = "".join(chooser.sample(labels, chooser.randint(1, 4)))
        present = sorted(set(a + b))
        output = "".join(chooser.sample(present, chooser.randint(0, len(present))))
        sizes = {c: chooser.randint(1, 4) for c in labels}
        x = rng.standard_normal([sizes[c] for c in a])
        y = rng.standard_normal([sizes[c] for c in b])
        subscripts = f"{a},{b}->{output}"
        np.testing.assert_allclose(pairwise_call(np, subscripts, x, y)(), np.einsum(subscripts, x, y),
                                   rtol=1e-10, atol=1e-10, err_msg=subscripts)


def test_step_outputs_replay_the_path_in_opt_einsum_convention():
    workload = Workload(0, "m.py:1:1", "m.py", 1, 1, "einsum", "torch", "",
                        operand_shapes=((2, 3), (3, 4), (4, 5)), operand_dtype="float32",
                        steps=(Step((0, 1), "ab,bc->ac"), Step((0, 1), "cd,ac->ad")))
    assert step_output_shapes(workload) == [(2, 4), (2, 5)]
    assert workload.footprint_bytes() == (6 + 12 + 20 + 20 + 8 + 10) * 4


def test_label_sizes_refuse_conflicts_and_allow_broadcast_ones():
    assert label_sizes(["ab", "bc"], [(2, 3), (3, 4)]) == {"a": 2, "b": 3, "c": 4}
    assert label_sizes(["ab", "bc"], [(2, 3), (5, 4)]) is None
    assert label_sizes(["ab", "ab"], [(1, 3), (2, 3)]) == {"a": 2, "b": 3}


class _Backend:
    cache_bytes = 1000

    def evict(self):
        pass


def test_small_operands_get_enough_cold_copies_and_large_ones_none():
    settings = MeasureSettings(repeats=10, warmup=2, memory_cap_bytes=10**9)
    small = Workload(0, "x", None, None, None, "matmul", None, "", operand_shapes=((10,),), operand_dtype="float32")
    copies, evict = _cold_operands(small, _Backend(), settings, 80)
    assert evict is None and (copies - 12) * 40 >= 2 * 1000  # 2x the cache written after each copy used
    large = Workload(0, "x", None, None, None, "matmul", None, "", operand_shapes=((1000,),), operand_dtype="float32")
    assert _cold_operands(large, _Backend(), settings, 8000) == (1, None)
    tight = MeasureSettings(repeats=10, warmup=2, memory_cap_bytes=100)
    copies, evict = _cold_operands(small, _Backend(), tight, 80)
    assert copies == 1 and evict is not None  # copies would not fit: evict the cache instead


def test_every_cold_copy_computes_the_same_result():
    backend_module = pytest.importorskip("tensorcost_lint.measurement.backends")
    backend = backend_module.NumpyBackend()
    workload = Workload(3, "x", None, None, None, "einsum", "numpy", "", operand_shapes=((4, 5), (5, 6)),
                        operand_dtype="float32", output_dtype="float32", steps=(Step((0, 1), "ab,bc->ac"),))
    calls = backend.prepare(workload, copies=3)
    results = [call() for call in calls]
    for first, second in itertools.combinations(results, 2):
        np.testing.assert_allclose(first, second)
    assert len({id(call) for call in calls}) == 3


def test_attention_workloads_take_the_plans_layout_and_mask():
    """jax writes [batch, seq, heads, dim], SDPA [..., L, E]; every backend runs [batch, heads,
    seq, dim], taken from the checked plan, and a causal site is timed causal."""
    import textwrap

    from tensorcost_lint.config.project_config import parse_config
    from tensorcost_lint.driver.engine import lint_source
    from tensorcost_lint.measurement.workloads import attention_flops, site_workload

    source = textwrap.dedent('''
        import jax
        import torch.nn.functional as F
        from jaxtyping import Array, Float
        from torch import Tensor


        def jax_attend(q: Float[Array, "b s h d"], k: Float[Array, "b s h d"], v: Float[Array, "b s h d"]):
            return jax.nn.dot_product_attention(q, k, v, is_causal=True)


        def torch_attend(q: Float[Tensor, "s d"], k: Float[Tensor, "s d"], v: Float[Tensor, "s d"]):
            return F.scaled_dot_product_attention(q, k, v)
    ''')
    config = parse_config({"dims": {"b": 2, "s": 128, "h": 8, "d": 64}}, "test", None)
    result = lint_source(source, "m.py", config)
    jax_site, torch_site = result.sites
    jax_work = site_workload(0, "m.py", jax_site, config)
    torch_work = site_workload(1, "m.py", torch_site, config)
    assert jax_work.operand_shapes == ((2, 8, 128, 64),) * 3 and jax_work.causal
    assert torch_work.operand_shapes == ((1, 1, 128, 64),) * 3 and not torch_work.causal
    assert jax_work.skip_reason is None and torch_work.skip_reason is None
    assert jax_work.flops == attention_flops(*jax_work.operand_shapes, causal=True) < attention_flops(*jax_work.operand_shapes)


def test_a_workload_that_would_run_other_flops_is_skipped_not_timed():
    from tensorcost_lint.measurement.workloads import checked

    base = dict(operand_shapes=((4, 5), (5, 6)), operand_dtype="float32", steps=(Step((0, 1), "ab,bc->ac"),))
    right = Workload(0, "x", None, None, None, "matmul", "torch", "", flops=2 * 4 * 5 * 6, **base)
    assert checked(right).skip_reason is None
    wrong = Workload(0, "x", None, None, None, "matmul", "torch", "", flops=2 * 4 * 5 * 6 + 1, **base)
    assert "FLOPs" in checked(wrong).skip_reason
    looped = Workload(0, "x", None, None, None, "einsum", "numpy", "", operand_shapes=((2, 3), (3, 4), (4, 5)),
                      operand_dtype="float32", steps=(Step((0, 1, 2), "ab,bc,cd->ad", single_loop=True),),
                      flops=3 * 2 * 3 * 4 * 5, executions=1)
    assert checked(looped).skip_reason is None  # one loop over 4 indices: 2 multiplies + 1 add per point
