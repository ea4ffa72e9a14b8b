"""einops patterns: grammar, rearrange/repeat/reduce shapes, einsum axes."""

from __future__ import annotations

import pytest

from shape_annotations import (
    Const,
    EinopsPattern,
    ShapeError,
    Sym,
    Unknown,
    einops_einsum_axes,
    parse_einops_pattern,
    rearrange_shape,
    reduce_shape,
    render_dim,
    repeat_shape,
)


def shape(*dims):
    return tuple(Sym(d) if isinstance(d, str) else Const(d) for d in dims)


def text(dims):
    return [render_dim(d) for d in dims]


def test_pattern_grammar():
    parsed = parse_einops_pattern("b (h d) 1 ... -> b h d ()")
    assert parsed == EinopsPattern(((("b", ("h", "d"), 1, "...")),), ("b", "h", "d", ()))
    assert parsed.input_offsets == ((0, 2, 8, 10),) and parsed.output_offsets == (17, 19, 21, 23)
    assert parse_einops_pattern("b h q d, b h k d -> b h q k").inputs == (("b", "h", "q", "d"), ("b", "h", "k", "d"))
    assert parse_einops_pattern("h w -> h w c 2").output == ("h", "w", "c", 2)


@pytest.mark.parametrize(
    "pattern, offset",
    [
        ("b c", 0),
        ("a -> b -> c", 7),
        ("(a (b)) -> a", 3),
        ("a) -> a", 1),
        ("(a -> a", 0),
        ("a.b -> a", 1),
        ("... ... -> a", 0),
        ("a$ -> a", 1),
        ("_a -> _a", 0),
        ("a_ -> a_", 0),
        ("2d -> 2d", 0),
        ("a 0 -> a", 2),
        ("a\tb -> a b", 1),
    ],
)
def test_pattern_errors(pattern, offset):
    with pytest.raises(ShapeError) as info:
        parse_einops_pattern(pattern)
    assert info.value.offset == offset


@pytest.mark.parametrize(
    "pattern, dims, lengths, expected",
    [
        ("b (h d) -> b h d", ("B", "D"), {"h": 8}, ["B", "8", "D//8"]),
        ("b (h d) -> b h d", ("B", 512), {"h": 8}, ["B", "8", "64"]),
        ("b s (h d) -> b h s d", ("b", "s", "d_model"), {"h": Sym("n_heads")}, ["b", "n_heads", "s", "d_model//n_heads"]),
        ("b h s d -> b s (h d)", ("b", "h", "s", "d"), {}, ["b", "s", "h*d"]),
        ("b h s d -> b s (h d)", ("b", 8, "s", 64), {}, ["b", "s", "512"]),
        ("b c h w -> b (c h w)", ("b", 3, 32, 32), {}, ["b", "3072"]),
        ("b ... c -> b c ...", ("b", "x", "y", "c"), {}, ["b", "c", "x", "y"]),
        ("b ... c -> b c (...)", ("b", "x", "y", "c"), {}, ["b", "c", "x*y"]),
        ("... -> ...", (), {}, []),
        ("b 1 d -> b d", ("b", 1, "d"), {}, ["b", "d"]),
        ("b d -> b () d 1", ("b", "d"), {}, ["b", "1", "d", "1"]),
        ("(b1 b2) h -> b1 b2 h", (12, "h"), {"b1": 3}, ["3", "4", "h"]),
        ("x y -> y x", (2, 3), {"x": 2}, ["3", "2"]),
    ],
)
def test_rearrange(pattern, dims, lengths, expected):
    assert text(rearrange_shape(pattern, shape(*dims), lengths)) == expected


def test_rearrange_accepts_int_lengths_and_parsed_patterns():
    parsed = parse_einops_pattern("b (h d) -> b h d")
    assert text(rearrange_shape(parsed, shape("B", 64), {"h": 8})) == ["B", "8", "8"]


def test_unknown_input_dims_flow_through():
    out = rearrange_shape("b (h d) -> b h d", (Sym("b"), Unknown()), {"h": 8})
    assert out[1] == Const(8) and type(out[2]) is Unknown


@pytest.mark.parametrize(
    "pattern, dims, lengths, fragment",
    [
        ("b (h d) -> b h d", ("B", 500), {"h": 8}, "cannot divide"),
        ("b (h d) -> b h d", ("B", "D"), {}, "could not infer"),
        ("a b -> a b", (4, 5), {"a": 3}, "mismatch"),
        ("(a b) -> a b", (12,), {"a": 3, "b": 5}, "mismatch"),
        ("b 1 d -> b d", ("b", 2, "d"), {}, "mismatch"),
        ("a b -> a", (1, 2), {}, "one side"),
        ("a b -> a b c", (1, 2), {}, "one side"),
        ("a b -> a b", (1, 2, 3), {}, "expects 2 dims"),
        ("a ... b -> a b ...", (1,), {}, "at least 2"),
        ("a b -> a b ...", (1, 2), {}, "'...' on the output"),
        ("a (b ...) -> a b ...", (1, 2), {}, "inside parentheses"),
        ("a a -> a", (1, 1), {}, "duplicate"),
        ("a 2 -> a", (1, 2), {}, "anonymous"),
        ("a b -> b a", (1, 2), {"z": 3}, "not used"),
        ("a, b -> a b", (1, 2), {}, "one input"),
        ("_ b -> b _", (1, 2), {}, "'_'"),
    ],
)
def test_rearrange_errors(pattern, dims, lengths, fragment):
    with pytest.raises(ShapeError, match=fragment):
        rearrange_shape(pattern, shape(*dims), lengths)


def test_repeat():
    assert text(repeat_shape("h w -> h w c", shape("h", "w"), {"c": 3})) == ["h", "w", "3"]
    assert text(repeat_shape("h w -> (h 2) (w 2)", shape("h", "w"), {})) == ["2*h", "2*w"]
    assert text(repeat_shape("b d -> b n d", shape("b", "d"), {"n": Sym("n_heads")})) == ["b", "n_heads", "d"]
    assert text(repeat_shape("... d -> ... r d", shape("x", "y", "d"), {"r": 4})) == ["x", "y", "4", "d"]
    with pytest.raises(ShapeError, match="needs a size for new axis 'c'") as info:
        repeat_shape("h w -> h w c", shape("h", "w"), {})
    assert info.value.offset == 11
    with pytest.raises(ShapeError, match="input side of repeat"):
        repeat_shape("h w -> h", shape("h", "w"), {})


def test_reduce():
    assert text(reduce_shape("b s d -> b d", shape("b", "s", "d"), {})) == ["b", "d"]
    assert text(reduce_shape("b (s 2) d -> b s d", shape("b", 10, "d"), {})) == ["b", "5", "d"]
    assert text(reduce_shape("b c h w -> b c 1 1", shape("b", "c", "h", "w"), {})) == ["b", "c", "1", "1"]
    assert text(reduce_shape("b ... d -> b d", shape("b", "x", "y", "d"), {})) == ["b", "d"]
    assert text(reduce_shape("b (h h2) (w w2) c -> b h w c", shape("b", 64, 64, 3), {"h2": 2, "w2": 2})) == ["b", "32", "32", "3"]
    with pytest.raises(ShapeError, match="output side of reduce"):
        reduce_shape("b s -> b s t", shape("b", "s"), {})
    with pytest.raises(ShapeError, match="anonymous"):
        reduce_shape("b s -> b 2", shape("b", "s"), {})


def test_einsum_axes():
    assert einops_einsum_axes("b h q d, b h k d -> b h q k", 2) == (
        (("b", "h", "q", "d"), ("b", "h", "k", "d")),
        ("b", "h", "q", "k"),
    )
    assert einops_einsum_axes("... i j, ... j k -> ... i k", 2)[1] == ("...", "i", "k")
    assert einops_einsum_axes("batch seq, batch seq ->", 2)[1] == ()
    assert einops_einsum_axes("i i -> i", 1) == ((("i", "i"),), ("i",))
    assert einops_einsum_axes("_ i -> i", 1) == ((("_", "i"),), ("i",))


@pytest.mark.parametrize(
    "pattern, n, fragment",
    [
        ("a b, b c -> a c", 3, "2 inputs for 3"),
        ("a b, b c", 2, "needs '->'"),
        ("a (b c) -> a", 1, "groups"),
        ("a 2 -> a", 1, "anonymous"),
        ("a b -> a a", 1, "twice"),
        ("a b -> c", 1, "unknown axis 'c'"),
    ],
)
def test_einsum_axes_errors(pattern, n, fragment):
    with pytest.raises(ShapeError, match=fragment):
        einops_einsum_axes(pattern, n)
