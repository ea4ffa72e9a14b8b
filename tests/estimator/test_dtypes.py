from __future__ import annotations

import pytest

from estimator import Accumulation, UnknownDtype, classify_accumulation, normalize_dtype, safe_accumulator


@pytest.mark.parametrize(
    "spelling,canonical",
    [
        ("torch.bfloat16", "bfloat16"), ("jnp.float16", "float16"), ("bf16", "bfloat16"),
        ("np.float32", "float32"), ("numpy.float64", "float64"), ("jax.numpy.bfloat16", "bfloat16"),
        ("torch.half", "float16"), ("torch.float", "float32"), ("np.float_", "float64"),
        ("torch.double", "float64"), ("torch.long", "int64"), ("torch.int", "int32"),
        ("fp8_e4m3", "float8_e4m3fn"), ("torch.float8_e5m2", "float8_e5m2"), ("'float32'", "float32"),
        ("torch.cfloat", "complex64"), ("np.complex128", "complex128"), ("torch.bool", "bool"),
        ("uint8", "uint8"), ("ml_dtypes.bfloat16", "bfloat16"),
    ],
)
def test_user_spellings_normalise_in_one_place(spelling, canonical):
    assert normalize_dtype(spelling).name == canonical


def test_unknown_dtype_is_refused_with_its_name():
    with pytest.raises(UnknownDtype, match="float13"):
        normalize_dtype("float13")


def test_dtype_table_sizes_and_bits():
    table = {
        "float64": (8, 11, 52), "float32": (4, 8, 23), "bfloat16": (2, 8, 7), "float16": (2, 5, 10),
        "float8_e4m3fn": (1, 4, 3), "float8_e5m2": (1, 5, 2), "int8": (1, 0, 7), "complex64": (8, 8, 23),
        "complex128": (16, 11, 52), "int64": (8, 0, 63), "bool": (1, 0, 1),
    }
    for name, (size, exponent, mantissa) in table.items():
        dtype = normalize_dtype(name)
        assert (dtype.bytes, dtype.exponent_bits, dtype.mantissa_bits) == (size, exponent, mantissa)


SAFE, NARROW, INCOMPAT = Accumulation.SAFE, Accumulation.NARROWING, Accumulation.INCOMPATIBLE


@pytest.mark.parametrize(
    "operand,accumulation,verdict",
    [
        ("float16", "float32", SAFE), ("bfloat16", "float32", SAFE), ("float8_e4m3fn", "float32", SAFE),
        ("float8_e5m2", "float32", SAFE), ("float32", "float32", SAFE), ("float32", "float64", SAFE),
        ("int8", "int32", SAFE), ("uint8", "int32", SAFE), ("float64", "float64", SAFE),
        # DESIGN.md's narrowing examples: keeps the range, loses precision
        ("float16", "float16", NARROW), ("float32", "bfloat16", NARROW), ("float8_e4m3fn", "float16", NARROW),
        ("float8_e5m2", "float16", NARROW), ("bfloat16", "bfloat16", NARROW), ("float64", "float32", INCOMPAT),
        ("int8", "int16", NARROW),
        # less exponent range than the operands
        ("bfloat16", "float16", INCOMPAT), ("float32", "float16", INCOMPAT), ("int8", "float32", INCOMPAT),
        ("float16", "int32", INCOMPAT), ("complex64", "float32", INCOMPAT), ("complex64", "complex64", SAFE),
    ],
)
def test_accumulation_matrix(operand, accumulation, verdict):
    assert classify_accumulation(normalize_dtype(operand), normalize_dtype(accumulation)) is verdict


def test_safe_accumulator_is_itself_safe_for_every_dtype():
    from estimator import DTYPES

    for dtype in DTYPES.values():
        assert classify_accumulation(dtype, safe_accumulator(dtype)) is SAFE
