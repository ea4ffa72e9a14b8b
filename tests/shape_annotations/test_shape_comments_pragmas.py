"""Shape comments (nanoGPT / TransformerLens conventions), file pragmas and binding precedence."""

from __future__ import annotations

import pytest

from shape_annotations import (
    MAX_SIZE,
    ShapeError,
    Unknown,
    UnsupportedShape,
    merge_dim_bindings,
    parse_pragma,
    parse_shape_comment,
    render_dim,
)


def rendered(comment: str):
    parsed = parse_shape_comment(comment)
    return None if parsed is None else [render_dim(d) for d in parsed.dims]


@pytest.mark.parametrize(
    "comment, dims",
    [
        ("# (B, nh, T, hs)", ["B", "nh", "T", "hs"]),  # nanoGPT
        ("# (B, T, C)", ["B", "T", "C"]),
        ("# [batch, pos, d_model]", ["batch", "pos", "d_model"]),  # TransformerLens
        ("# [batch, pos, head_index, d_head]", ["batch", "pos", "head_index", "d_head"]),  # TransformerLens
        ("# shape: (B, T, C)", ["B", "T", "C"]),
        ("#shape:(B,T,C)", ["B", "T", "C"]),
        ("# Shape: [b, s]", ["b", "s"]),
        ("# (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)", ["B", "nh", "T", "hs"]),  # nanoGPT
        ("# (B, T, C) -> (B, T, 3C)", ["B", "T", "3*C"]),
        ("# (B, T, C) @ (C, 3*C) → (B, T, 3*C)", ["B", "T", "3*C"]),
        ("# (B, T, C // nh)", ["B", "T", "C//nh"]),
        ("# (B, T, n_embd*3)", ["B", "T", "n_embd*3"]),
        ("# (B, T, (C//nh))", ["B", "T", "C//nh"]),
        ("# (8, 1024)", ["8", "1024"]),
        ("# (B, _, ?)", ["B", "?", "?"]),
        ("# (B,)", ["B"]),
        ("# shape: ()", []),
        ("# shape (t)", ["t"]),  # nanoGPT: pos = torch.arange(0, t)  # shape (t)
        ("# token embeddings of shape (b, t, n_embd)", ["b", "t", "n_embd"]),  # nanoGPT
        ("# position embeddings of shape (t, n_embd)", ["t", "n_embd"]),  # nanoGPT
        ("# shape: (B, T, C) after the projection", ["B", "T", "C"]),
        ("# (B, T, C).", ["B", "T", "C"]),
        ("  #  (B, T)  ", ["B", "T"]),
        ("# (B, T)  # noqa: E501", ["B", "T"]),
    ],
)
def test_shape_comments(comment, dims):
    assert rendered(comment) == dims


def test_offsets_and_operands():
    parsed = parse_shape_comment("# (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)")
    assert parsed.offset == 36 and len(parsed.operands) == 2
    assert parse_shape_comment("# shape: (B, T, C)").offset == 9
    assert parse_shape_comment("# (B, T)").operands == ()
    assert type(parse_shape_comment("# (B, _)").dims[1]) is Unknown


@pytest.mark.parametrize(
    "comment",
    [
        "# compute attention (fast path)",
        "# see (1)",
        "# TODO(x)",
        "# (1)",
        "# [1]",
        "# (optional)",
        "# (see above)",
        "# re-assemble all head outputs side by side",  # nanoGPT
        "# calculate query, key, values for all heads in batch and move head forward to be the batch dim",
        "# (B, T, C) re-assemble",
        "# (a, b) = c",
        "# return (a, b)",
        "# (B, ..., C)",
        "# (*batch, C)",
        "# (B, T) x (T, C)",  # operands but no target
        "# (B, self.n_head)",
        "# (B, T",
        "# noqa: E501",
        "#",
        "",
    ],
)
def test_prose_comments_are_not_shapes(comment):
    assert parse_shape_comment(comment) is None


@pytest.mark.parametrize(
    "comment, offset, kind",
    [
        ("# shape: B, T", 9, ShapeError),
        ("# shape: (B, T,, C)", 15, ShapeError),
        ("# shape: (B, T", 9, ShapeError),
        ("# shape: (B, T$)", 14, ShapeError),
        ("# shape: (B, T) ->", 18, ShapeError),
        ("# shape: (a, b) (c, d)", 16, ShapeError),
        ("# shape: (B, self.x)", 13, UnsupportedShape),
    ],
)
def test_declared_shape_comments_that_do_not_parse_are_errors(comment, offset, kind):
    with pytest.raises(kind) as info:
        parse_shape_comment(comment)
    assert info.value.offset == offset


@pytest.mark.parametrize(
    "comment, sizes",
    [
        ("# tensorcost: dims T=1024 B=8", {"T": 1024, "B": 8}),
        ("#tensorcost: dims seq=8_192", {"seq": 8192}),
        ("# tensorcost: dims T = 1024, B=8  # context and batch", {"T": 1024, "B": 8}),
        (f"# tensorcost: dims big={MAX_SIZE}", {"big": MAX_SIZE}),
    ],
)
def test_pragmas(comment, sizes):
    assert parse_pragma(comment) == sizes


@pytest.mark.parametrize("comment", ["# just a comment", "# tensorcost: ignore", "not a comment", "# dims T=3", ""])
def test_not_pragmas(comment):
    assert parse_pragma(comment) is None


@pytest.mark.parametrize(
    "comment, offset",
    [
        ("# tensorcost: dims T=1e3", 21),
        ("# tensorcost: dims T=0", 21),
        ("# tensorcost: dims T=-4", 21),
        ("# tensorcost: dims T=1.5", 21),
        ("# tensorcost: dims T=", 21),
        ("# tensorcost: dims T=8__1", 21),
        ("# tensorcost: dims T=_8", 21),
        (f"# tensorcost: dims T={MAX_SIZE + 1}", 21),
        ("# tensorcost: dims T=1 T=2", 23),
        ("# tensorcost: dims 1T=3", 19),
        ("# tensorcost: dims cfg.T=3", 19),
        ("# tensorcost: dims T 3", 21),
        ("# tensorcost: dims", 14),
        ("# tensorcost: dim T=3", 14),
        ("# tensorcost: dimsT=3", 14),
    ],
)
def test_malformed_pragmas(comment, offset):
    with pytest.raises(ShapeError) as info:
        parse_pragma(comment)
    assert info.value.offset == offset, info.value


def test_binding_precedence_config_pragma_cli():
    merged = merge_dim_bindings({"T": 1, "B": 2, "C": 3}, {"T": 10, "B": 20}, {"T": 100})
    assert merged == {"T": 100, "B": 20, "C": 3}


@pytest.mark.parametrize(
    "config",
    [{"T": 0}, {"T": -1}, {"T": 1.5}, {"T": True}, {"T": "8"}, {"T": MAX_SIZE + 1}, {"1T": 3}, {3: 3}],
)
def test_bindings_are_validated(config):
    with pytest.raises(ShapeError, match="config"):
        merge_dim_bindings(config, {}, {})
