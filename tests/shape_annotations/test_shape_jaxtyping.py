"""jaxtyping shape strings and dtype classes, including the examples of jaxtyping's own docs."""

from __future__ import annotations

import gc
import time

import pytest

from shape_annotations import (
    DTYPE_CLASSES,
    MAX_DIMS,
    MAX_TEXT_CHARS,
    BinOp,
    Const,
    DTypeSpec,
    ParsedShape,
    ShapeDim,
    ShapeError,
    Sym,
    Unknown,
    UnsupportedShape,
    Variadic,
    dtype_spec_for_class,
    is_array_type,
    parse_shape_string,
    render_shape,
)


def dim(name, **kw):
    return ShapeDim(Sym(name), **kw)


# (shape string, expected dims, canonical rendering). Strings marked "docs" are from jaxtyping's
# documentation (docs/api/array.md, README) or its test-suite.
ACCEPTED = [
    ("batch seq d_model", (dim("batch"), dim("seq"), dim("d_model")), "batch seq d_model"),
    ("28 28", (ShapeDim(Const(28)), ShapeDim(Const(28))), "28 28"),  # docs
    ("channels", (dim("channels"),), "channels"),  # docs
    ("dim-1", (ShapeDim(BinOp("-", Sym("dim"), Const(1))),), "dim-1"),  # docs
    ("dim1 dim2", (dim("dim1"), dim("dim2")), "dim1 dim2"),  # docs (README)
    ("*batch", (Variadic("batch"),), "*batch"),  # docs
    ("#foo", (dim("foo", broadcastable=True),), "#foo"),  # docs
    ("b c _ _", None, "b c _ _"),  # docs
    ("rows=4 cols=3", (ShapeDim(Const(4), doc_name="rows"), ShapeDim(Const(3), doc_name="cols")), "rows=4 cols=3"),  # docs
    ("... c h w", (Variadic(None), dim("c"), dim("h"), dim("w")), "... c h w"),  # docs
    ("", (), ""),  # docs: a scalar
    ("...", (Variadic(None),), "..."),  # docs: any shape
    ("channels height width", (dim("channels"), dim("height"), dim("width")), "channels height width"),  # docs
    ("?foo", (dim("foo", treepath=True),), "?foo"),  # docs (pytree)
    (" #*foo", (Variadic("foo", broadcastable=True),), "#*foo"),  # jaxtyping tests
    (" *#foo", (Variadic("foo", broadcastable=True),), "#*foo"),  # jaxtyping tests
    (" 2*dim", (ShapeDim(BinOp("*", Const(2), Sym("dim"))),), "2*dim"),  # jaxtyping tests
    (" foo *batch bar", (dim("foo"), Variadic("batch"), dim("bar")), "foo *batch bar"),  # jaxtyping tests
    ("*#B J d", (Variadic("B", broadcastable=True), dim("J"), dim("d")), "#*B J d"),  # jaxtyping tests
    ("#4", (ShapeDim(Const(4), broadcastable=True),), "#4"),  # jaxtyping tests
    ("bar #foo=bar", (dim("bar"), ShapeDim(Sym("bar"), True, "foo")), "bar #foo=bar"),  # jaxtyping tests
    ("bar foo=#bar", (dim("bar"), ShapeDim(Sym("bar"), True, "foo")), "bar #foo=bar"),  # jaxtyping tests
    ("bar qux foo=bar+qux", (dim("bar"), dim("qux"), ShapeDim(BinOp("+", Sym("bar"), Sym("qux")), doc_name="foo")), "bar qux foo=bar+qux"),
    ("b h s d", (dim("b"), dim("h"), dim("s"), dim("d")), "b h s d"),
    ("batch heads q k", None, "batch heads q k"),
    ("d_model//n_heads pos-1 2*d", (ShapeDim(BinOp("//", Sym("d_model"), Sym("n_heads"))), ShapeDim(BinOp("-", Sym("pos"), Const(1))), ShapeDim(BinOp("*", Const(2), Sym("d")))), "d_model//n_heads pos-1 2*d"),
    ("_ ?", None, "_ ?"),
    ("_foo", None, "_foo"),
    ("*_ x", (Variadic(None), dim("x")), "... x"),
    ("_*x", (Variadic(None),), "..."),
    ("x=_", None, "x=_"),
    ("=4", (ShapeDim(Const(4), doc_name=""),), "=4"),
    ("0", (ShapeDim(Const(0)),), "0"),
    ("+4 007", (ShapeDim(Const(4)), ShapeDim(Const(7))), "4 7"),
    ("a\tb\nc", (dim("a"), dim("b"), dim("c")), "a b c"),
    ("name=*batch", (Variadic("batch"),), "*batch"),
]


@pytest.mark.parametrize("text, dims, rendered", ACCEPTED)
def test_accepted_shapes(text, dims, rendered):
    parsed = parse_shape_string(text)
    if dims is not None:
        assert parsed.dims == dims
    assert parsed.text == text
    assert render_shape(parsed) == rendered
    assert parse_shape_string(render_shape(parsed)) == parsed


def test_anonymous_dims_are_unknown():
    parsed = parse_shape_string("b c _ _")
    first, second = parsed.dims[2].expr, parsed.dims[3].expr
    assert type(first) is Unknown and type(second) is Unknown
    assert first != second  # two `_` are not the same dim (no false quadratic)
    assert parsed == parse_shape_string("b c _ _")  # but the annotation equals its re-parse
    assert type(parse_shape_string("?").dims[0].expr) is Unknown
    assert parse_shape_string("_foo").dims[0].expr.label == "_foo"


def test_helpers():
    shape = parse_shape_string("*batch seq d")
    assert shape.has_variadic and shape.fixed_rank is None and shape.variadic_index == 0
    assert shape.min_rank == 2 and shape.exprs() is None
    fixed = parse_shape_string("b s d")
    assert not fixed.has_variadic and fixed.fixed_rank == 3
    assert fixed.exprs() == (Sym("b"), Sym("s"), Sym("d"))
    assert parse_shape_string("").fixed_rank == 0
    assert hash(fixed) == hash(parse_shape_string(" b  s d "))


# (shape string, offset of the error, error class). All of these are rejected by jaxtyping too,
# except where noted.
REJECTED = [
    ("*4", 0, ShapeError),
    ("_4", 0, ShapeError),
    ("?4", 0, ShapeError),
    ("#_", 0, ShapeError),
    ("foo, bar", 3, ShapeError),  # jaxtyping tests: commas
    ("a,b", 1, ShapeError),
    ("*a ...", 3, ShapeError),  # two variadics
    ("*a b *c", 5, ShapeError),
    ("##foo", 1, ShapeError),
    ("**foo", 1, ShapeError),
    ("__foo", 1, ShapeError),
    ("??foo", 1, ShapeError),
    ("foo#", 3, ShapeError),  # the pre-v0.1 broadcast syntax
    ("#...", 0, ShapeError),
    ("a ...b", 2, ShapeError),
    ("*a+b", 0, ShapeError),
    ("_a+b", 0, ShapeError),
    ("?a+b", 0, ShapeError),
    ("a b+", 4, ShapeError),
    ("x (a+b", 2, ShapeError),
    ("-1", 0, ShapeError),  # ours: a negative size is never a shape
    ("*", 0, ShapeError),  # ours: jaxtyping takes it as a variadic named ''
    ("#", 0, ShapeError),
    ("b {self.size}", 2, UnsupportedShape),  # docs: f-string fields
    ("{dim}", 0, UnsupportedShape),
    ("{self.some_value}+3", 0, UnsupportedShape),  # docs
    ("foo bar min(foo,bar)", 8, UnsupportedShape),  # jaxtyping tests: a call
    ("a self.x", 2, UnsupportedShape),
]


@pytest.mark.parametrize("text, offset, kind", REJECTED)
def test_rejected_shapes(text, offset, kind):
    with pytest.raises(kind) as info:
        parse_shape_string(text)
    assert info.value.offset == offset, info.value
    assert 1 <= info.value.length <= len(text)


def test_error_offset_points_inside_symbolic_dims():
    with pytest.raises(ShapeError) as info:
        parse_shape_string("batch seq d_model//$")
    assert info.value.offset == 19


def test_bounds_are_refused_quickly():
    # the bound is on the parser's work: a collection of the whole worker's heap (other tests'
    # objects) inside the timed span is not the parser's, and made this fail at 0.93 s under load
    gc.disable()
    try:
        _refuse_the_bounds()
    finally:
        gc.enable()


def _refuse_the_bounds():
    start = time.process_time()
    with pytest.raises(ShapeError, match="4096"):
        parse_shape_string("a " * (MAX_TEXT_CHARS // 2 + 1))
    with pytest.raises(ShapeError, match="4096"):
        parse_shape_string("é" * 2100)  # over 4 KiB as UTF-8
    with pytest.raises(ShapeError, match="64 dims") as info:
        parse_shape_string(" ".join(f"d{i}" for i in range(MAX_DIMS + 1)))
    assert info.value.offset == len(" ".join(f"d{i}" for i in range(MAX_DIMS))) + 1
    assert parse_shape_string(" ".join(f"d{i}" for i in range(MAX_DIMS))).fixed_rank == MAX_DIMS
    with pytest.raises(ShapeError, match="deeper"):
        parse_shape_string("(" * 2000 + "a" + ")" * 2000)
    assert time.process_time() - start < 0.5


@pytest.mark.parametrize(
    "name, exact, family",
    [
        ("Float", None, "float"),
        ("jaxtyping.Float", None, "float"),
        ("jt.BFloat16", "bfloat16", None),
        ("Float16", "float16", None),
        ("Float32", "float32", None),
        ("Float64", "float64", None),
        ("Float8e4m3fn", "float8_e4m3fn", None),
        ("Float8e5m2", "float8_e5m2", None),
        ("Int8", "int8", None),
        ("Int32", "int32", None),
        ("UInt8", "uint8", None),
        ("Bool", "bool", "bool"),
        ("Shaped", None, "shaped"),
        ("Num", None, "num"),
        ("Inexact", None, "inexact"),
        ("Real", None, "real"),
        ("Integer", None, "integer"),
        ("Int", None, "int"),
        ("UInt", None, "uint"),
        ("Complex", None, "complex"),
        ("Complex64", "complex64", None),
        ("my_project.typing.Float", None, "float"),
    ],
)
def test_dtype_classes(name, exact, family):
    spec = dtype_spec_for_class(name)
    assert spec == DTypeSpec(exact, family)


def test_dtype_resolution_and_unmodelled_dtypes():
    assert DTYPE_CLASSES["Float"].resolve("float32") == "float32"
    assert DTYPE_CLASSES["Float"].resolve("int32") is None
    assert DTYPE_CLASSES["Float"].resolve("bf16") == "bfloat16"
    assert DTYPE_CLASSES["BFloat16"].resolve("float32") == "bfloat16"
    assert DTYPE_CLASSES["Shaped"].resolve("float16") == "float16"
    assert DTYPE_CLASSES["Real"].resolve("int8") == "int8"
    assert DTYPE_CLASSES["Inexact"].resolve("complex64") == "complex64"
    assert DTYPE_CLASSES["UInt16"] == DTypeSpec(None, None, "uint16")
    assert DTYPE_CLASSES["UInt16"].resolve("float32") is None
    assert DTYPE_CLASSES["Float8e4m3fnuz"].unmodelled == "float8_e4m3fnuz"
    assert dtype_spec_for_class("Tensor") is None
    assert dtype_spec_for_class("Optional") is None


def test_dtype_intersection_follows_jaxtyping():
    spec = DTYPE_CLASSES
    assert spec["Shaped"].intersect(spec["Float"]) == spec["Float"]
    assert spec["Float"].intersect(spec["BFloat16"]) == spec["BFloat16"]
    assert spec["Real"].intersect(spec["Inexact"]) == spec["Float"]
    assert spec["Bool"].intersect(spec["Float"]) is None
    assert spec["Int8"].intersect(spec["UInt"]) is None


@pytest.mark.parametrize(
    "name, expected",
    [
        ("Tensor", True), ("torch.Tensor", True), ("Array", True), ("jax.Array", True),
        ("jnp.ndarray", True), ("np.ndarray", True), ("ndarray", True), ("ArrayLike", True),
        ("jax.typing.ArrayLike", True), ("npt.NDArray", True), ("torch.FloatTensor", True),
        ("mx.array", True), ("tf.Tensor", True),
        ("int", False), ("str", False), ("array", False), ("Optional", False), ("Float", False),
    ],
)
def test_is_array_type(name, expected):
    assert is_array_type(name) is expected


def test_parsed_shape_is_frozen():
    shape = parse_shape_string("a")
    with pytest.raises(AttributeError):
        shape.dims = ()  # type: ignore[misc]
    assert isinstance(shape, ParsedShape)
