"""interpret_annotation over the plain trees the lint layer builds from LibCST nodes."""

from __future__ import annotations

import pytest

from shape_annotations import (
    AName,
    ANone,
    AOther,
    AString,
    ASubscript,
    AUnion,
    Const,
    DTypeSpec,
    ShapeError,
    Sym,
    UnsupportedShape,
    Variadic,
    interpret_annotation,
    parse_annotation_text,
    render_shape,
)


def jt(dtype: str, array: str, shape: str, at: int = 0) -> ASubscript:
    return ASubscript(AName(dtype), (AName(array), AString(shape, at)))


def shapes(result) -> list[str]:
    return [render_shape(c.shape) for c in result.candidates]


def test_plain_jaxtyping_annotation():
    result = interpret_annotation(jt("Float", "Tensor", "batch seq d_model"), {})
    assert result.error is None and result.error_string is None
    (candidate,) = result.candidates
    assert candidate.dtype == DTypeSpec(None, "float")
    assert candidate.array_type == "Tensor"
    assert render_shape(candidate.shape) == "batch seq d_model"


@pytest.mark.parametrize(
    "dtype, array, exact",
    [
        ("BFloat16", "torch.Tensor", "bfloat16"),
        ("jaxtyping.Float16", "Array", "float16"),
        ("jt.Int8", "np.ndarray", "int8"),
        ("UInt8", "jax.Array", "uint8"),
        ("Bool", "jnp.ndarray", "bool"),
    ],
)
def test_dtype_classes_and_array_types(dtype, array, exact):
    (candidate,) = interpret_annotation(jt(dtype, array, "b h s d"), {}).candidates
    assert candidate.dtype.resolve("float32") == exact
    assert candidate.array_type == array


def test_module_level_aliases_and_reexported_dtype_class():
    aliases = {
        "Scores": jt("Float", "Tensor", "batch heads q k"),
        "Alias2": AName("Scores"),
        "F": AName("jaxtyping.Float"),
        "SHAPE": AString("b s", 7),
    }
    assert shapes(interpret_annotation(AName("Scores"), aliases)) == ["batch heads q k"]
    assert shapes(interpret_annotation(AName("Alias2"), aliases)) == ["batch heads q k"]
    via_class = interpret_annotation(ASubscript(AName("F"), (AName("Tensor"), AString("x y", 0))), aliases)
    assert shapes(via_class) == ["x y"] and via_class.candidates[0].dtype.family == "float"
    via_constant = interpret_annotation(ASubscript(AName("Float"), (AName("Tensor"), AName("SHAPE"))), aliases)
    assert shapes(via_constant) == ["b s"]


def test_alias_cycles_terminate():
    aliases = {"A": AName("B"), "B": AName("A")}
    assert interpret_annotation(AName("A"), aliases).candidates == ()


@pytest.mark.parametrize(
    "node",
    [
        ASubscript(AName("Optional"), (jt("Float", "Tensor", "b s"),)),
        ASubscript(AName("typing.Optional"), (jt("Float", "Tensor", "b s"),)),
        AUnion((jt("Float", "Tensor", "b s"), ANone())),
        AUnion((ANone(), jt("Float", "Tensor", "b s"))),
        ASubscript(AName("Annotated"), (jt("Float", "Tensor", "b s"), AString("doc", 0))),
        AString('Float[Tensor, "b s"]', 0),
        AString("Optional[Float[Tensor, 'b s']]", 0),
    ],
)
def test_optional_and_forward_reference_forms(node):
    result = interpret_annotation(node, {})
    assert shapes(result) == ["b s"] and result.error is None


def test_unions_keep_every_rank():
    node = ASubscript(AName("Union"), (jt("Float", "Tensor", "b s d"), jt("Float", "Tensor", "s d"), AName("int")))
    assert shapes(interpret_annotation(node, {})) == ["b s d", "s d"]
    pipe = AUnion((jt("Float", "Tensor", "b s d"), jt("Float", "Tensor", "s d"), jt("Float", "Tensor", "s d")))
    assert shapes(interpret_annotation(pipe, {})) == ["b s d", "s d"]  # duplicates folded


def test_union_in_the_array_slot_is_unpacked():
    node = ASubscript(AName("Float"), (AUnion((AName("torch.Tensor"), AName("np.ndarray"))), AString("b", 0)))
    result = interpret_annotation(node, {})
    assert [c.array_type for c in result.candidates] == ["torch.Tensor", "np.ndarray"]


def test_nested_array_types_prepend_dims_and_intersect_dtypes():
    aliases = {"Image": jt("Float", "jax.Array", "channels height width")}
    batch = interpret_annotation(ASubscript(AName("Shaped"), (AName("Image"), AString("batch", 0))), aliases)
    (candidate,) = batch.candidates  # jaxtyping docs: equivalent to Float[jax.Array, "batch channels height width"]
    assert render_shape(candidate.shape) == "batch channels height width"
    assert candidate.dtype.family == "float" and candidate.array_type == "jax.Array"
    inline = ASubscript(AName("BFloat16"), (jt("Float", "Tensor", "a"), AString("b", 0)))
    (candidate,) = interpret_annotation(inline, {}).candidates
    assert render_shape(candidate.shape) == "b a" and candidate.dtype.exact == "bfloat16"
    bad = interpret_annotation(ASubscript(AName("Bool"), (AName("Image"), AString("batch", 0))), aliases)
    assert bad.candidates == () and "no dtype" in bad.error.message
    two = interpret_annotation(ASubscript(AName("Shaped"), (jt("Float", "Tensor", "*a x"), AString("y *b", 3))), {})
    assert two.error.offset == 2 and two.error_string == AString("y *b", 3)


def test_bad_shape_string_reports_the_string_and_offset():
    string = AString("batch, seq", 25)
    result = interpret_annotation(ASubscript(AName("Float"), (AName("Tensor"), string)), {})
    assert result.candidates == ()
    assert result.error_string is string
    assert result.error.offset == 5  # the comma, relative to the string contents


def test_error_inside_a_forward_reference_points_into_the_inner_string():
    text = 'Optional[Float[Tensor, "b ,c"]] | Float[Tensor, "x"]'
    result = interpret_annotation(AString(text, 10), {})
    assert shapes(result) == ["x"]  # the good option is still a candidate
    inner = result.error_string
    assert inner.text == "b ,c" and inner.start_offset == 10 + text.index("b ,c")
    assert result.error.offset == 2


def test_unsupported_shapes_are_reported_not_guessed():
    result = interpret_annotation(jt("Float", "Array", "{self.size}-1"), {})
    assert isinstance(result.error, UnsupportedShape) and result.candidates == ()
    call = interpret_annotation(jt("Float", "Array", "foo bar min(foo,bar)"), {})
    assert isinstance(call.error, UnsupportedShape) and call.error.offset == 8
    variable = interpret_annotation(ASubscript(AName("Float"), (AName("Tensor"), AName("shape_var"))), {})
    assert isinstance(variable.error, UnsupportedShape) and variable.error_string is None


@pytest.mark.parametrize(
    "node",
    [
        AName("torch.Tensor"),
        AName("int"),
        ANone(),
        AOther("lambda: 0"),
        ASubscript(AName("dict"), (AName("str"), AString("b s", 0))),
        ASubscript(AName("list"), (AName("Tensor"),)),
        AString("Dict[str, int]", 0),
        AString("not an annotation (", 0),
    ],
)
def test_non_tensor_annotations(node):
    assert interpret_annotation(node, {}) == interpret_annotation(ANone(), {})
    assert interpret_annotation(node, {}).error is None


def test_custom_dtype_class_with_a_known_array_type():
    (candidate,) = interpret_annotation(jt("UInt8or16", "Tensor", "h w"), {}).candidates
    assert candidate.dtype is None and render_shape(candidate.shape) == "h w"
    quiet = interpret_annotation(jt("MyThing", "Tensor", "a, b"), {})
    assert quiet.candidates == () and quiet.error is None


def test_jaxtyping_scalar_aliases():
    (candidate,) = interpret_annotation(AName("jaxtyping.Scalar"), {}).candidates
    assert candidate.shape.fixed_rank == 0


def test_torchtyping():
    node = ASubscript(
        AName("TensorType"),
        (AString("batch", 0), AOther('"seq": 10'), AOther("3"), AOther("-1"), AName("float"), AName("is_named")),
    )
    (candidate,) = interpret_annotation(node, {}).candidates
    dims = candidate.shape.dims
    assert dims[0].expr == Sym("batch")
    assert dims[1].expr == Const(10) and dims[1].doc_name == "seq"
    assert dims[2].expr == Const(3)
    assert candidate.dtype == DTypeSpec(None, "float") and candidate.array_type == "torch.Tensor"
    variadic = ASubscript(AName("torchtyping.TensorType"), (AOther('"batch": ...'), AString("c", 0), AName("torch.int8")))
    (candidate,) = interpret_annotation(variadic, {}).candidates
    assert candidate.shape.dims[0] == Variadic("batch") and candidate.dtype.exact == "int8"
    anon = ASubscript(AName("TensorType"), (AOther("..."), AString("d", 0), AName("int")))
    (candidate,) = interpret_annotation(anon, {}).candidates
    assert render_shape(candidate.shape) == "... d" and candidate.dtype.exact == "int64"
    unreadable_slice = ASubscript(AName("TensorType"), (AOther(":"), AString("c", 0)))
    assert interpret_annotation(unreadable_slice, {}).candidates == ()
    (candidate,) = interpret_annotation(ASubscript(AName("TensorType"), (AOther(""), AString("c", 0))), {}).candidates
    assert candidate.shape.fixed_rank == 2  # an unreadable item is still one dim
    bad = interpret_annotation(ASubscript(AName("TensorType"), (AString("a b", 4),)), {})
    assert isinstance(bad.error, ShapeError) and bad.error_string == AString("a b", 4)


def test_annotation_text_parser():
    node = parse_annotation_text('jt.Float[torch.Tensor, "b s"] | None', 3)
    assert node == AUnion((ASubscript(AName("jt.Float"), (AName("torch.Tensor"), AString("b s", 3 + 24))), ANone()))
    assert parse_annotation_text('TensorType["b": 3, ...]') == ASubscript(
        AName("TensorType"), (AOther('"b": 3'), AOther("..."))
    )
    assert parse_annotation_text("x[" * 100 + "y" + "]" * 100) == AOther("x[" * 100 + "y" + "]" * 100)
    assert type(parse_annotation_text("a" * 5000)) is AOther
