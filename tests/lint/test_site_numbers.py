"""Exact numbers of call sites, cross-checked against independent counters: torch's
FlopCounterMode (on meta tensors, nothing allocated) and opt_einsum's path costs."""

from __future__ import annotations

from pathlib import Path

import pytest

from estimator.units import format_flops
from tensorcost_lint.config.config_discovery import ConfigResolver
from tensorcost_lint.config.project_config import ProjectConfig
from tensorcost_lint.driver.runner import lint_paths

from .helpers import lint, site_by_line

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "lint" / "nanogpt_style_attention.py"


def test_nanogpt_style_attention_costs_att_at_v_exactly():
    result = lint(FIXTURE.read_text())
    att_v = site_by_line(result, 36)
    assert att_v.site.expression == "att @ v"
    cost = att_v.cost
    assert cost.flops == 2 * 12 * 12 * 1024 * 1024 * 64
    assert cost.flops_formula == "2*B*nh*T^2*hs"
    assert cost.output_shape == (12, 12, 1024, 64)
    assert cost.output_bytes == 12 * 12 * 1024 * 64 * 4
    # traffic: read att [B,nh,T,T] and v [B,nh,T,hs], write y [B,nh,T,hs], float32
    assert cost.traffic_bytes == 4 * (12 * 12 * 1024 * 1024 + 2 * 12 * 12 * 1024 * 64)
    scores = site_by_line(result, 32).cost
    assert scores.output_bytes == 12 * 12 * 1024 * 1024 * 4


def test_contract_6_example_numbers():
    """DESIGN.md's JSON example: q @ kᵀ in float32 at batch 8, heads 16, seq 8192, d_head 128."""
    source = '''
        from jaxtyping import Float
        from torch import Tensor


        def scores(q: Float[Tensor, "batch heads seq d_head"], k: Float[Tensor, "batch heads seq d_head"]):
            return q @ k.transpose(-2, -1)
    '''
    result = lint(source, {"dims": {"batch": 8, "heads": 16, "seq": 8192, "d_head": 128}})
    cost = result.sites[0].cost
    assert cost.flops == 2199023255552
    assert cost.flops_formula == "2*batch*heads*seq^2*d_head"
    assert cost.output_bytes == 34359738368
    assert cost.traffic_bytes == 35433480192
    assert cost.retained_bytes == 34359738368
    assert round(float(cost.arithmetic_intensity), 2) == 62.06
    assert f"{float(cost.lower_bound_seconds):.4g}" == "0.03282"
    assert cost.bottleneck == "COMPUTE"


def _causal_entries(queries: int, keys: int) -> int:
    """Unmasked scores under a top-left causal mask, counted one query row at a time."""
    return sum(min(i + 1, keys) for i in range(queries))


def _torch_flops(site, cost):
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    shapes = cost.operand_shapes
    tensors = [torch.empty(shape, device="meta") for shape in shapes]
    with FlopCounterMode(display=False) as counter:
        if site.operation == "linear":
            torch.nn.functional.linear(tensors[0], tensors[1].transpose(0, 1))
        elif site.operation == "attention":
            q, k, v = tensors
            if site.framework == "jax":  # [B, T, N, H] -> [B, N, T, H]
                q, k, v = (t.transpose(1, 2) for t in (q, k, v))
            torch.nn.functional.scaled_dot_product_attention(q, k, v)
        else:
            torch.matmul(*tensors)
    total = counter.get_total_flops()
    if site.operation == "attention" and site.attention.is_causal:
        # torch's counter charges causal SDPA the full square; only the unmasked scores must be computed
        queries, keys = q.shape[-2], k.shape[-2]
        total = total * _causal_entries(queries, keys) // (queries * keys)
    return total


def _opt_einsum_flops(site, cost):
    oe = pytest.importorskip("opt_einsum")
    shapes = cost.operand_shapes
    subscripts = site.einsum.subscripts
    if site.framework == "einops":
        names = {}
        terms = []
        lhs, _, rhs = subscripts.partition("->")
        for term in lhs.split(",") + [rhs]:
            terms.append("".join(names.setdefault(n, "abcdefghijklmnopqrstuvwxyz"[len(names)]) for n in term.split()))
        subscripts = ",".join(terms[:-1]) + "->" + terms[-1]
    path = [tuple(step) for step in cost.execution.order.path] if cost.execution is not None else "optimal"
    _, info = oe.contract_path(subscripts, *shapes, shapes=True, optimize=path)
    return info.opt_cost


def test_every_resolved_example_site_matches_an_independent_counter():
    """examples/ is the main job: every number it reports is recomputed by torch or opt_einsum."""
    report = lint_paths([str(ROOT / "examples")], ConfigResolver())
    assert not [f for f in report.findings if f.code == "TCL900"]
    checked = 0
    for _, _, result in report.numbered_sites():
        site, cost = result.site, result.cost
        if not cost.resolved:
            continue
        if site.operation == "einsum":
            expected = _opt_einsum_flops(site, cost)
        elif site.operation == "dot_general":
            continue  # covered below with its einsum equivalent
        else:
            expected = _torch_flops(site, cost)
        assert cost.flops == expected, (site.line, site.expression, cost.flops, expected)
        checked += 1
    assert checked == 23  # every resolved site but the one dot_general (checked below)


def test_dot_general_matches_its_einsum():
    oe = pytest.importorskip("opt_einsum")
    source = '''
        import jax.numpy as jnp
        from jax import lax
        from jaxtyping import Array, BFloat16


        def out_proj(y: BFloat16[Array, "b t h k"], w: BFloat16[Array, "h k d"]):
            return lax.dot_general(y, w, (((2, 3), (0, 1)), ((), ())), preferred_element_type=jnp.float32)
    '''
    result = lint(source, {"dims": {"b": 2, "t": 64, "h": 4, "k": 16, "d": 32}})
    cost = result.sites[0].cost
    _, info = oe.contract_path("bthk,hkd->btd", (2, 64, 4, 16), (4, 16, 32), shapes=True)
    assert cost.flops == info.opt_cost
    assert cost.output_shape == (2, 64, 32)


IMPORT_STYLES = [
    ("import torch as th", "th.einsum('ij,jk->ik', a, b)", "torch"),
    ("from torch import einsum", "einsum('ij,jk->ik', a, b)", "torch"),
    ("import torch", "torch.matmul(a, b)", "torch"),
    ("from torch import matmul as mm_", "mm_(a, b)", "torch"),
    ("import torch.nn.functional as F", "F.linear(a, b.T)", "torch"),
    ("from torch.nn import functional as F", "F.linear(a, b.T)", "torch"),
    ("import numpy as np", "np.einsum('ij,jk->ik', a, b)", "numpy"),
    ("from numpy import einsum", "einsum('ij,jk->ik', a, b)", "numpy"),
    ("import numpy as np", "np.dot(a, b)", "numpy"),
    ("from jax import numpy as jnp", "jnp.einsum('ij,jk->ik', a, b)", "jax"),
    ("import jax.numpy as jnp", "jnp.matmul(a, b)", "jax"),
    ("from jax import lax", "lax.dot_general(a, b, (((1,), (0,)), ((), ())))", "jax"),
    ("import jax", "jax.numpy.einsum('ij,jk->ik', a, b)", "jax"),
    ("import einops", "einops.einsum(a, b, 'i j, j k -> i k')", "einops"),
    ("from einops import einsum", "einsum(a, b, 'i j, j k -> i k')", "einops"),
    ("import opt_einsum as oe", "oe.contract('ij,jk->ik', a, b)", "opt_einsum"),
    ("from opt_einsum import contract", "contract('ij,jk->ik', a, b)", "opt_einsum"),
    ("import torch", "a @ b", "torch"),
    ("import torch", "a.matmul(b)", "torch"),
]


@pytest.mark.parametrize("import_line,call,framework", IMPORT_STYLES, ids=[f"{i} | {c}" for i, c, _ in IMPORT_STYLES])
def test_every_import_style_finds_and_costs_the_call(import_line, call, framework):
    source = f'''
        {import_line}
        from jaxtyping import Float
        from torch import Tensor


        def f(a: Float[Tensor, "m k"], b: Float[Tensor, "k n"]):
            return {call}
    '''
    result = lint(source, {"dims": {"m": 96, "k": 40, "n": 24}})
    assert len(result.sites) == 1, [s.site.expression for s in result.sites]
    site, cost = result.sites[0].site, result.sites[0].cost
    assert site.framework == framework
    assert cost.resolved, cost.reason
    assert cost.flops == 2 * 96 * 40 * 24
    assert cost.output_shape == (96, 24)


def test_unimported_lookalikes_are_not_sites():
    source = '''
        def f(a, b):
            return einsum("ij,jk->ik", a, b) + mylib.matmul(a, b)
    '''
    assert lint(source).sites == []


def test_unresolved_sites_say_why():
    source = '''
        import torch
        from jaxtyping import Float
        from torch import Tensor


        def f(a: Float[Tensor, "m k"], b, c: Float[Tensor, "k n"]):
            return a @ b, a @ c
    '''
    result = lint(source)
    reasons = [s.cost.reason for s in result.sites]
    assert "operand 1 has no known shape" in reasons[0]
    assert "unbound dims: m, k, n" in reasons[1]
    assert ProjectConfig().dims == {}


def test_optional_arguments_absent_from_a_call_are_not_an_error():
    source = '''
        import torch
        from jaxtyping import Float
        from torch import Tensor


        def route(scores: Float[Tensor, "tokens experts"], w: Float[Tensor, "experts d"]):
            rows, cols = torch.where(scores > 0)
            picked = scores.softmax(dim=-1).to()
            return picked @ w, rows, cols
    '''
    result = lint(source, {"dims": {"tokens": 64, "experts": 8, "d": 32}})
    assert [f.code for f in result.findings] == []
    assert result.sites[0].cost.flops == 2 * 64 * 8 * 32


def test_parenthesised_sites_point_at_the_expression_and_their_fix_inserts_before_the_paren():
    source = '''
        import numpy as np


        def chain():
            a = np.zeros((1000, 1000))
            b = np.zeros((1000, 64))
            c = np.zeros((64, 10))
            return (np.einsum("ij,jk,kl->il", a, b, c)) * 2
    '''
    result = lint(source)
    site = result.sites[0].site
    line = source.splitlines()[site.line - 1][8:]  # the helper dedents by 8
    assert line[site.column - 1:].startswith('np.einsum(')
    fix = [f for f in result.findings if f.code == "TCL403"][0].fix
    text = line[: fix.column - 1] + fix.replacement + line[fix.end_column - 1:]
    assert text.endswith('np.einsum("ij,jk,kl->il", a, b, c, optimize="optimal")) * 2')


def test_only_init_defines_what_other_methods_see_through_self():
    source = '''
        import torch.nn as nn
        from jaxtyping import Float
        from torch import Tensor


        class Head(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.lm_head = nn.Linear(config.d_model, config.vocab, bias=False)

            def set_output_embeddings(self, new):
                self.lm_head = new

            def forward(self, h: Float[Tensor, "tokens d_model"]):
                return self.lm_head(h)
    '''
    result = lint(source, {"dims": {"tokens": 16, "d_model": 64, "vocab": 1000}})
    [site] = [s for s in result.sites if s.site.operation == "linear"]
    assert site.cost.flops == 2 * 16 * 64 * 1000


def test_causal_attention_counts_only_the_unmasked_scores():
    source = '''
        import torch.nn.functional as F
        from jaxtyping import BFloat16
        from torch import Tensor


        def attend(q: BFloat16[Tensor, "b h s d"], k: BFloat16[Tensor, "b h s d"], v: BFloat16[Tensor, "b h s d"]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True), F.scaled_dot_product_attention(q, k, v)
    '''
    result = lint(source, {"dims": {"b": 2, "h": 4, "s": 100, "d": 16}})
    causal, full = (s.cost for s in result.sites)
    assert full.flops == 4 * 2 * 4 * 100 * 100 * 16
    assert causal.flops == 4 * 2 * 4 * _causal_entries(100, 100) * 16 == 4 * 2 * 4 * (100 * 101 // 2) * 16
    assert causal.flops_formula == "b*h*s^2*d + b*h*s*d" or causal.flops_polynomial.evaluate(
        {"b": 2, "h": 4, "s": 100, "d": 16}) == causal.flops
    assert causal.traffic_bytes == full.traffic_bytes  # Q, K, V read once, O written once either way


def test_jax_attention_formula_follows_its_layout():
    source = '''
        import jax
        from jaxtyping import Array, BFloat16


        def attend(q: BFloat16[Array, "b t h k"], k: BFloat16[Array, "b s h k"], v: BFloat16[Array, "b s h k"]):
            return jax.nn.dot_product_attention(q, k, v)
    '''
    cost = lint(source, {"dims": {"b": 2, "t": 64, "s": 48, "h": 4, "k": 16}}).sites[0].cost
    assert cost.flops_formula == "4*b*h*t*s*k"
    assert cost.flops == 4 * 2 * 4 * 64 * 48 * 16
    assert cost.output_shape == (2, 64, 4, 16)


def test_a_linear_whose_sizes_cannot_be_read_keeps_a_rank_two_weight():
    source = '''
        import torch.nn as nn
        from jaxtyping import Float
        from torch import Tensor


        class MLP(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.up = nn.Linear(config.hidden_size, make_width(config), bias=False)

            def forward(self, x: Float[Tensor, "tokens hidden_size"]):
                slices = self.up.weight.split(config.hidden_size // config.pretraining_tp, dim=1)
                return self.up(x), slices
    '''
    result = lint(source, {"dims": {"tokens": 8, "hidden_size": 64, "pretraining_tp": 2}})
    assert not [f for f in result.findings if f.code == "TCL900"]
    [site] = result.sites
    assert not site.cost.resolved and "out_features" in site.cost.reason


CHAIN = '''
    from jaxtyping import Float
    from torch import Tensor


    def probe(h: Float[Tensor, "tokens d"], w_down: Float[Tensor, "d r"], w_up: Float[Tensor, "r d"],
              direction: Float[Tensor, "d"]):
        return {expression}
'''
CHAIN_DIMS = {"dims": {"tokens": 512, "d": 1024, "r": 16}}


def test_a_matmul_chain_as_written_is_costed_against_its_best_order():
    oe = pytest.importorskip("opt_einsum")
    result = lint(CHAIN.format(expression="h @ w_down @ w_up @ direction"), CHAIN_DIMS)
    [finding] = [f for f in result.findings if f.code == "TCL403"]
    shapes = [(512, 1024), (1024, 16), (16, 1024), (1024,)]
    _, written = oe.contract_path("ab,bc,cd,d->a", *shapes, shapes=True, optimize=[(0, 1), (0, 2), (0, 1)])  # results go last
    _, best = oe.contract_path("ab,bc,cd,d->a", *shapes, shapes=True, optimize="optimal")
    assert written.opt_cost == 2 * 512 * 1024 * 16 * 2 + 2 * 512 * 1024
    assert f"costing {format_flops(written.opt_cost)} vs {format_flops(best.opt_cost)}" in finding.message
    assert "runs as written, `((h @ w_down) @ w_up) @ direction`" in finding.message
    assert finding.message.endswith("write `h @ (w_down @ (w_up @ direction))`")


@pytest.mark.parametrize("expression", [
    "h @ (w_down @ (w_up @ direction))",  # already the best order
    "h @ w_down",  # not a chain
])
def test_chains_in_a_good_order_are_not_flagged(expression):
    assert "TCL403" not in [f.code for f in lint(CHAIN.format(expression=expression), CHAIN_DIMS).findings]
