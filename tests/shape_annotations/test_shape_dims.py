"""Dimension expressions: grammar, rendering, evaluation with exact division, comparison."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shape_annotations import (
    MAX_DEPTH,
    BinOp,
    Const,
    ShapeError,
    Sym,
    Unknown,
    UnsupportedShape,
    add_dims,
    dim_from_int,
    evaluate_dim,
    floordiv_dims,
    free_names,
    mul_dims,
    parse_dim_expr,
    render_dim,
    same_dim,
    simplify_dim,
    sub_dims,
)

a, b, c, d = Sym("a"), Sym("b"), Sym("c"), Sym("d")


@pytest.mark.parametrize(
    "text, expected, rendered",
    [
        ("seq", Sym("seq"), "seq"),
        ("64", Const(64), "64"),
        ("8_192", Const(8192), "8192"),
        ("pos-1", BinOp("-", Sym("pos"), Const(1)), "pos-1"),
        ("d_model//n_heads", BinOp("//", Sym("d_model"), Sym("n_heads")), "d_model//n_heads"),
        ("2*d", BinOp("*", Const(2), d), "2*d"),
        (" C // nh ", BinOp("//", Sym("C"), Sym("nh")), "C//nh"),
        ("(a+b)*c", BinOp("*", BinOp("+", a, b), c), "(a+b)*c"),
        ("a+b*c", BinOp("+", a, BinOp("*", b, c)), "a+b*c"),
        ("a-(b-c)", BinOp("-", a, BinOp("-", b, c)), "a-(b-c)"),
        ("a-b-c", BinOp("-", BinOp("-", a, b), c), "a-b-c"),
        ("a*(b//c)", BinOp("*", a, BinOp("//", b, c)), "a*(b//c)"),
        ("a*b//c", BinOp("//", BinOp("*", a, b), c), "a*b//c"),
        ("((a))", a, "a"),
        ("a/2", BinOp("//", a, Const(2)), "a//2"),  # jaxtyping's true division matches only when exact
        ("d**2", BinOp("*", d, d), "d*d"),
        ("-3", Const(-3), "-3"),
        ("a*-3", BinOp("*", a, Const(-3)), "a*-3"),
        ("-a", BinOp("-", Const(0), a), "0-a"),
        ("n_embd*3", BinOp("*", Sym("n_embd"), Const(3)), "n_embd*3"),
        ("ĺen", Sym("ĺen"), "ĺen"),
    ],
)
def test_dim_expression_table(text, expected, rendered):
    parsed = parse_dim_expr(text)
    assert parsed == expected
    assert render_dim(parsed) == rendered
    assert parse_dim_expr(rendered) == expected


def test_anonymous_dims_parse_as_unknown_and_render_as_question_mark():
    for text in ("?", "_"):
        dim = parse_dim_expr(text)
        assert type(dim) is Unknown
        assert render_dim(dim) == "?"
    with pytest.raises(ShapeError) as info:
        parse_dim_expr("a+_", allow_unknown=False)
    assert info.value.offset == 2


def test_implicit_multiplication_only_when_asked():
    assert parse_dim_expr("3C", implicit_mul=True) == BinOp("*", Const(3), Sym("C"))
    with pytest.raises(ShapeError):
        parse_dim_expr("3C")


@pytest.mark.parametrize(
    "text, offset, kind",
    [
        ("", 0, ShapeError),
        ("a+", 2, ShapeError),
        ("(a+b", 0, ShapeError),
        ("a b", 2, ShapeError),
        ("a$b", 1, ShapeError),
        ("1__0", 0, ShapeError),
        ("a)", 1, ShapeError),
        ("99999999999999999999", 0, ShapeError),
        ("{self.x}", 0, UnsupportedShape),
        ("{dim}+1", 0, UnsupportedShape),
        ("min(a,b)", 0, UnsupportedShape),
        ("self.x", 0, UnsupportedShape),
        ("a%2", 1, UnsupportedShape),
        ("a**b", 1, UnsupportedShape),
        ("a**9", 1, UnsupportedShape),
    ],
)
def test_dim_expression_errors_carry_offsets(text, offset, kind):
    with pytest.raises(kind) as info:
        parse_dim_expr(text)
    assert info.value.offset == offset
    assert info.value.length >= 1
    assert str(info.value) == info.value.message


def test_depth_bound():
    nested = "(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH
    assert parse_dim_expr(nested) == a
    with pytest.raises(ShapeError, match="deeper"):
        parse_dim_expr("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1))
    chain = "+".join(["a"] * (MAX_DEPTH + 1))  # depth 32: accepted
    parse_dim_expr(chain)
    with pytest.raises(ShapeError, match="deeper"):
        parse_dim_expr(chain + "+a")
    with pytest.raises(ShapeError, match="deeper"):
        parse_dim_expr("-" * 4000 + "a")


def test_free_names_and_dim_from_int():
    assert free_names(parse_dim_expr("d_model//n_heads+1")) == {"d_model", "n_heads"}
    assert dim_from_int(4) == Const(4)
    with pytest.raises(TypeError):
        dim_from_int(True)


def test_evaluate_binds_names():
    assert evaluate_dim(parse_dim_expr("d_model//n_heads"), {"d_model": 768, "n_heads": 12}) == 64
    assert evaluate_dim(parse_dim_expr("pos-1"), {"pos": 10}) == 9
    assert evaluate_dim(parse_dim_expr("pos-1"), {}) is None
    assert evaluate_dim(Unknown(), {"a": 1}) is None
    assert evaluate_dim(BinOp("*", Unknown(), Const(2)), {}) is None


def test_evaluate_refuses_inexact_division_naming_the_dims():
    with pytest.raises(ShapeError) as info:
        evaluate_dim(parse_dim_expr("d_model//n_heads"), {"d_model": 768, "n_heads": 5})
    message = str(info.value)
    assert "d_model=768" in message and "n_heads=5" in message and "divide exactly" in message


def test_evaluate_refuses_non_positive_and_overflow():
    with pytest.raises(ShapeError, match="positive"):
        evaluate_dim(parse_dim_expr("pos-1"), {"pos": 1})
    with pytest.raises(ShapeError, match="2\\*\\*63-1"):
        evaluate_dim(parse_dim_expr("a*b"), {"a": 2**40, "b": 2**40})
    with pytest.raises(ShapeError, match="divisor"):
        evaluate_dim(parse_dim_expr("a//(b-b)"), {"a": 4, "b": 3})


def test_unknown_is_never_equal():
    u = Unknown("_")
    assert u != Unknown("_")
    assert u == u  # identity, so it can still live in dicts and sets
    assert same_dim(u, u, {}) is None
    assert same_dim(u, Const(1), {}) is None


@pytest.mark.parametrize(
    "left, right, sizes, expected",
    [
        ("a", "a", {}, True),
        ("2*d", "d*2", {}, True),
        ("d+d", "2*d", {}, True),
        ("(h*d)//h", "d", {}, True),
        ("d_model//heads", "d_head", {"d_model": 768, "heads": 12, "d_head": 64}, True),
        ("d_model//heads", "d_head", {"d_model": 768, "heads": 12, "d_head": 32}, False),
        ("d_model//heads", "d_head", {}, None),
        ("a", "b", {}, None),
        ("a", "b", {"a": 3, "b": 3}, True),
        ("pos", "pos+1", {}, False),
        ("4", "5", {}, False),
        ("4//2", "2", {}, True),
        ("a//b", "c", {"a": 7, "b": 2, "c": 3}, None),  # inexact: undecidable here, evaluate reports it
    ],
)
def test_same_dim(left, right, sizes, expected):
    assert same_dim(parse_dim_expr(left), parse_dim_expr(right), sizes) is expected


@pytest.mark.parametrize(
    "text, simplified",
    [
        ("2*d", "2*d"),
        ("d*2", "2*d"),
        ("4//2", "2"),
        ("5//2", "5//2"),
        ("1*d", "d"),
        ("d//1", "d"),
        ("d+0", "d"),
        ("1+pos", "pos+1"),
        ("pos+1-1", "pos"),
        ("pos-1+3", "pos+2"),
        ("2*(3*d)", "6*d"),
        ("(8*d)//2", "4*d"),
        ("a-a", "0"),
        ("a//a", "1"),
        ("2+3*4", "14"),
    ],
)
def test_simplify(text, simplified):
    assert render_dim(simplify_dim(parse_dim_expr(text))) == simplified


def test_builders():
    assert mul_dims(Sym("h"), Sym("d")) == BinOp("*", Sym("h"), Sym("d"))
    assert mul_dims(Const(1), d) == d
    assert floordiv_dims(mul_dims(Sym("h"), Sym("d")), Sym("h")) == Sym("d")
    assert floordiv_dims(Sym("C"), Sym("n_head")) == BinOp("//", Sym("C"), Sym("n_head"))
    assert floordiv_dims(Const(512), Const(8)) == Const(64)
    assert add_dims(Sym("pos"), Const(1)) == parse_dim_expr("pos+1")
    assert sub_dims(Sym("pos"), Const(1)) == parse_dim_expr("pos-1")
    with pytest.raises(ShapeError, match="not divisible"):
        floordiv_dims(Const(500), Const(8))
    with pytest.raises(ShapeError, match="positive"):
        floordiv_dims(d, Const(0))
    assert type(mul_dims(Unknown(), Const(2))) is BinOp  # stays unknown: evaluates to None
    assert evaluate_dim(mul_dims(Unknown(), Const(2)), {}) is None


NAMES = ("a", "b", "c")
small_dims = st.recursive(
    st.one_of(st.sampled_from(NAMES).map(Sym), st.integers(0, 6).map(Const)),
    lambda inner: st.builds(BinOp, st.sampled_from(["+", "-", "*", "//"]), inner, inner),
    max_leaves=7,
)
sizes_st = st.fixed_dictionaries({n: st.integers(1, 12) for n in NAMES})
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _value(d, sizes):
    try:
        return evaluate_dim(d, sizes)
    except ShapeError:
        return "refused"


@FAST
@given(small_dims, sizes_st)
def test_simplify_keeps_the_value_and_is_idempotent(d, sizes):
    simplified = simplify_dim(d)
    assert simplify_dim(simplified) == simplified
    before = _value(d, sizes)
    if before != "refused":
        assert _value(simplified, sizes) == before


@FAST
@given(small_dims, small_dims, sizes_st)
def test_same_dim_is_never_wrong(x, y, sizes):
    verdict = same_dim(x, y, sizes)
    assert same_dim(y, x, sizes) == verdict
    vx, vy = _value(x, sizes), _value(y, sizes)
    if verdict is not None and "refused" not in (vx, vy):
        assert (vx == vy) is verdict
    assert same_dim(x, x, sizes) is True


def test_evaluate_integer_gives_the_programs_integer_zero_and_negative_included():
    """A dim used as a Python int (`padding_length = kv_length - mask.shape[-1]`) may be 0 or less,
    which a size may not be: evaluate_integer reads it for a comparison or a trip count, `//` as
    Python's floor division (`(seq + block - 1) // block`); unbound names, Unknown dims and a zero
    divisor give None, where evaluate_dim (a size) refuses an inexact `//`."""
    from shape_annotations import BinOp, Const, Sym, Unknown, evaluate_integer

    assert evaluate_integer(BinOp("-", Sym("kv"), Sym("q")), {"kv": 8, "q": 8}) == 0
    assert evaluate_integer(BinOp("-", Sym("kv"), Const(10)), {"kv": 8}) == -2
    assert evaluate_integer(BinOp("+", Sym("kv"), Const(1)), {}) is None
    assert evaluate_integer(Unknown("slice"), {}) is None
    assert evaluate_integer(BinOp("//", Sym("d"), Const(2)), {"d": 9}) == 4
    blocks = BinOp("//", BinOp("-", BinOp("+", Sym("seq"), Sym("block")), Const(1)), Sym("block"))
    assert evaluate_integer(blocks, {"seq": 32, "block": 256}) == 1
    assert evaluate_integer(BinOp("//", Sym("d"), Sym("z")), {"d": 9, "z": 0}) is None
    with pytest.raises(ShapeError, match="divide exactly"):
        evaluate_dim(BinOp("//", Sym("d"), Const(2)), {"d": 9})
