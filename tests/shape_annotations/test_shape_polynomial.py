"""Exact polynomials for counts: rendering, degrees, growth, evaluation and algebraic laws."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shape_annotations import Const, Polynomial, ShapeError, Sym, Unknown, evaluate_dim, parse_dim_expr

P = Polynomial
SIZES = {"batch": 8, "heads": 16, "seq": 8192, "d_head": 128}


def attention_scores_flops() -> Polynomial:
    batch, heads, seq, d_head = (P.from_dim(Sym(n)) for n in ("batch", "heads", "seq", "d_head"))
    return P.const(2) * batch * heads * seq * seq * d_head


def test_render_in_shape_order():
    flops = attention_scores_flops()
    assert flops.render() == "2*batch*heads*seq^2*d_head"
    assert flops.evaluate(SIZES) == 2199023255552  # DESIGN.md's JSON example
    assert flops.degree("seq") == 2 and flops.degree("batch") == 1 and flops.degree("other") == 0
    assert flops.atoms() == ("batch", "heads", "seq", "d_head")


def test_growth():
    flops = attention_scores_flops()
    assert flops.growth("seq") == 4
    assert flops.growth("batch") == 2
    assert flops.growth("seq", 3) == 9
    assert flops.growth("unrelated") == 1
    mixed = P.atom("seq") * P.atom("seq") + P.atom("seq")
    assert mixed.growth("seq") is None  # not homogeneous: no single factor
    assert P.from_dim(parse_dim_expr("seq//2")).growth("seq") is None
    assert P.const(0).growth("seq") is None


def test_sums_render_by_degree_then_appearance():
    s, d = P.atom("seq"), P.atom("d")
    assert (s * d + s * s * d * 4 + 7).render() == "4*seq^2*d + seq*d + 7"
    assert (P.const(0) - s + d).render() == "-seq + d"
    assert (s - 2 * d).render() == "seq - 2*d"
    assert P.const(0).render() == "0"
    assert P.const(-5).render() == "-5"


def test_opaque_atoms():
    head = P.from_dim(parse_dim_expr("d_model//n_heads"))
    assert head.atoms() == ("d_model//n_heads",)
    assert head.render() == "d_model//n_heads"
    count = P.atom("batch") * head * 2
    assert count.render() == "2*batch*(d_model//n_heads)"
    assert count.evaluate({"batch": 2, "d_model": 768, "n_heads": 12}) == 256
    assert count.unbound({"batch": 2}) == ("d_model", "n_heads")
    with pytest.raises(ShapeError, match="divide exactly"):
        count.evaluate({"batch": 2, "d_model": 768, "n_heads": 5})
    # symbolic exact division cancels instead of becoming opaque
    assert P.from_dim(parse_dim_expr("(2*h*d)//h")) == P.const(2) * P.atom("d")
    assert P.from_dim(Unknown()) is None
    assert P.from_dims((Sym("a"), Const(3))) == P.atom("a") * 3
    assert P.from_dims((Sym("a"), Unknown())) is None


def test_any_sym_name_is_an_atom():
    # the lint layer may carry variadics or attributes as names; they are atoms, never parsed
    p = P.from_dim(Sym("*batch")) * P.from_dim(Sym("cfg.n_embd")) * 2
    assert p.atoms() == ("*batch", "cfg.n_embd")
    assert p.evaluate({"*batch": 3, "cfg.n_embd": 4}) == 24
    assert p.render() == "2*(*batch)*(cfg.n_embd)"
    with pytest.raises(ShapeError):
        P.atom("a//")


def test_evaluate_names_unbound_dims_and_refuses_overflow():
    flops = attention_scores_flops()
    with pytest.raises(ShapeError, match="unbound dims: seq, d_head"):
        flops.evaluate({"batch": 1, "heads": 1})
    assert flops.unbound({"batch": 1}) == ("heads", "seq", "d_head")
    with pytest.raises(ShapeError, match="count overflow"):
        flops.evaluate({"batch": 2**20, "heads": 2**10, "seq": 2**20, "d_head": 2**10})


def test_bounded_powers_and_equality_is_mathematical():
    s = P.atom("s")
    with pytest.raises(ShapeError):
        s ** 10_000
    assert (s + 1) ** 2 == s * s + 2 * s + 1
    assert hash((s + 1) ** 2) == hash(1 + s * (s + 2))
    assert s * P.atom("t") == P.atom("t") * s  # order is for rendering only


NAMES = ("a", "b", "c")
atoms = st.sampled_from(NAMES).map(P.atom)
consts = st.integers(-5, 5).map(P.const)
polys = st.recursive(
    st.one_of(atoms, consts),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: t[0] + t[1]),
        st.tuples(inner, inner).map(lambda t: t[0] * t[1]),
        st.tuples(inner, inner).map(lambda t: t[0] - t[1]),
    ),
    max_leaves=8,
)
sizes_st = st.fixed_dictionaries({n: st.integers(1, 50) for n in NAMES})
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(polys, polys, polys)
def test_ring_laws(p, q, r):
    assert p + q == q + p
    assert p * q == q * p
    assert p * (q + r) == p * q + p * r
    assert (p + q) + r == p + (q + r)
    assert p - p == P.const(0)


@FAST
@given(polys, polys, sizes_st)
def test_evaluation_is_a_homomorphism(p, q, sizes):
    assert (p * q).evaluate(sizes) == p.evaluate(sizes) * q.evaluate(sizes)
    assert (p + q).evaluate(sizes) == p.evaluate(sizes) + q.evaluate(sizes)


@FAST
@given(polys, st.integers(0, 3), sizes_st)
def test_powers(p, n, sizes):
    expected = p.evaluate(sizes) ** n
    if abs(expected) > 2**63 - 1:  # exact, but past the ceiling: refused, never wrapped
        with pytest.raises(ShapeError, match="count overflow"):
            (p**n).evaluate(sizes)
        return
    assert (p**n).evaluate(sizes) == expected


dims = st.recursive(
    st.one_of(st.sampled_from(NAMES).map(Sym), st.integers(1, 9).map(Const)),
    lambda inner: st.builds(lambda op, l, r: parse_dim_expr(f"({_r(l)}){op}({_r(r)})"), st.sampled_from(["+", "*", "//"]), inner, inner),
    max_leaves=6,
)


def _r(d):
    from shape_annotations import render_dim

    return render_dim(d)


@FAST
@given(dims, sizes_st)
def test_polynomial_of_a_dim_evaluates_like_the_dim(d, sizes):
    try:
        expected = evaluate_dim(d, sizes)
    except ShapeError:
        return  # inexact division: the polynomial must refuse too (checked below)
    assert P.from_dim(d).evaluate(sizes) == expected


def test_polynomial_refuses_where_the_dim_refuses():
    d = parse_dim_expr("a//b")
    with pytest.raises(ShapeError):
        P.from_dim(d).evaluate({"a": 7, "b": 2})
    assert P.from_dim(d).growth("c", Fraction(1, 2)) == 1
