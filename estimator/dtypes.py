"""The dtype table and the accumulation compatibility matrix.

Names arrive in every spelling users write (`torch.bfloat16`, `jnp.float16`, `"bf16"`,
`np.float32`, `torch.half`); `normalize_dtype` is the one place they are mapped to a `DType`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .errors import InvalidRecord, UnknownDtype


@dataclass(frozen=True, slots=True)
class DType:
    name: str
    bytes: int
    kind: str  # "float", "int", "uint", "bool", "complex"
    exponent_bits: int  # per component; 0 for integers and bool
    mantissa_bits: int  # explicit fraction bits for floats; value bits for integers

    def __str__(self) -> str:
        return self.name


def _d(name: str, size: int, kind: str, exponent: int, mantissa: int) -> DType:
    return DType(name, size, kind, exponent, mantissa)


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        _d("float64", 8, "float", 11, 52),
        _d("float32", 4, "float", 8, 23),
        _d("bfloat16", 2, "float", 8, 7),
        _d("float16", 2, "float", 5, 10),
        _d("float8_e4m3fn", 1, "float", 4, 3),
        _d("float8_e5m2", 1, "float", 5, 2),
        _d("int64", 8, "int", 0, 63),
        _d("int32", 4, "int", 0, 31),
        _d("int16", 2, "int", 0, 15),
        _d("int8", 1, "int", 0, 7),
        _d("uint8", 1, "uint", 0, 8),
        _d("bool", 1, "bool", 0, 1),
        _d("complex64", 8, "complex", 8, 23),
        _d("complex128", 16, "complex", 11, 52),
    )
}

_ALIASES = {
    "f64": "float64", "fp64": "float64", "double": "float64", "float": "float64", "float_": "float64",
    "f32": "float32", "fp32": "float32", "single": "float32",
    "bf16": "bfloat16",
    "f16": "float16", "fp16": "float16", "half": "float16",
    "float8_e4m3": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn", "e4m3": "float8_e4m3fn",
    "fp8": "float8_e4m3fn", "float8": "float8_e4m3fn", "f8e4m3fn": "float8_e4m3fn",
    "fp8_e5m2": "float8_e5m2", "e5m2": "float8_e5m2", "f8e5m2": "float8_e5m2",
    "long": "int64", "i64": "int64", "int": "int64", "int_": "int64",
    "i32": "int32", "intc": "int32",
    "short": "int16", "i16": "int16",
    "i8": "int8", "u8": "uint8", "byte": "uint8", "ubyte": "uint8",
    "bool_": "bool", "b1": "bool",
    "cfloat": "complex64", "c64": "complex64", "csingle": "complex64",
    "cdouble": "complex128", "c128": "complex128", "complex": "complex128", "complex_": "complex128",
}

# torch spells some names differently from numpy: torch.float is float32, torch.int is int32.
_TORCH_ALIASES = {"float": "float32", "int": "int32", "complex": "complex64", "cfloat": "complex64"}

_MODULE_PREFIXES = ("torch", "numpy", "np", "jax.numpy", "jnp", "jax", "ml_dtypes", "th", "tf")


# spellings already mapped: the analysis asks for the same few names once per tensor it sizes
_KNOWN_SPELLINGS: dict = {}
_MAX_KNOWN_SPELLINGS = 4096  # bounded: hostile input may spell a name many ways


def normalize_dtype(name: object, field: str = "dtype") -> DType:
    """Map any user spelling (or a DType) to the canonical DType; unknown names are refused."""
    if type(name) is DType:
        return name
    if type(name) is not str:
        raise InvalidRecord(field, f"expected a dtype name, got {type(name).__name__}")
    known = _KNOWN_SPELLINGS.get(name)
    if known is not None:
        return known
    found = _normalized(name, field)
    if len(_KNOWN_SPELLINGS) < _MAX_KNOWN_SPELLINGS:
        _KNOWN_SPELLINGS[name] = found
    return found


def _normalized(name: str, field: str) -> DType:
    text = name.strip().strip("'\"").strip()
    module = ""
    for prefix in sorted(_MODULE_PREFIXES, key=len, reverse=True):
        if text.startswith(prefix + "."):
            module, text = prefix, text[len(prefix) + 1 :]
            break
    key = text.lower()
    if module in ("torch", "th") and key in _TORCH_ALIASES:
        key = _TORCH_ALIASES[key]
    key = _ALIASES.get(key, key)
    if key in DTYPES:
        return DTYPES[key]
    raise UnknownDtype(field, f"unknown dtype {name!r}")


def lookup_dtype(name: str) -> DType | None:
    try:
        return normalize_dtype(name)
    except (UnknownDtype, InvalidRecord):
        return None


class Accumulation(Enum):
    SAFE = "safe"
    NARROWING = "narrowing"  # keeps the operand's range, loses precision
    INCOMPATIBLE = "incompatible"  # loses range (or mixes number domains)


_FLOAT_KINDS = ("float", "complex")
_INT_KINDS = ("int", "uint", "bool")


def safe_accumulator(operand: DType) -> DType:
    """The narrowest accumulation dtype that is safe for `operand` (DESIGN.md, Semantics)."""
    if operand.kind == "complex":
        return operand if operand.name == "complex128" else DTYPES["complex64"]
    if operand.kind == "float":
        return DTYPES["float64"] if operand.name == "float64" else DTYPES["float32"]
    return DTYPES["int64"] if operand.name == "int64" else DTYPES["int32"]


def classify_accumulation(operand: DType, accumulation: DType) -> Accumulation:
    if operand.kind in _FLOAT_KINDS:
        if accumulation.kind not in _FLOAT_KINDS or (operand.kind == "complex") != (accumulation.kind == "complex"):
            return Accumulation.INCOMPATIBLE
        if accumulation.exponent_bits < operand.exponent_bits:
            return Accumulation.INCOMPATIBLE
        safe = safe_accumulator(operand)
        if accumulation.mantissa_bits >= safe.mantissa_bits and accumulation.exponent_bits >= safe.exponent_bits:
            return Accumulation.SAFE
        return Accumulation.NARROWING
    if accumulation.kind not in ("int", "uint"):
        return Accumulation.INCOMPATIBLE
    safe = safe_accumulator(operand)
    return Accumulation.SAFE if accumulation.mantissa_bits >= safe.mantissa_bits else Accumulation.NARROWING
