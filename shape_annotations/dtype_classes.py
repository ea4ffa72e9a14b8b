"""jaxtyping dtype classes (`Float`, `BFloat16`, `Int8`, `Shaped`, ...) and array type names.

Each class maps to a DTypeSpec: an exact dtype in the estimator's canonical names, or a family
(jaxtyping follows numpy's scalar hierarchy). The member lists are jaxtyping's own, so nested
annotations intersect exactly as jaxtyping does (`Bool[Float[...], ...]` has no dtype at all).
Class names are matched on their last dotted part, so `jaxtyping.Float`, `jt.Float` and a
project's re-export of `Float` all work.
"""

from __future__ import annotations

from dataclasses import dataclass

from estimator.dtypes import DTYPES, lookup_dtype

# jaxtyping's dtype strings per family (jaxtyping/_array_types.py); order does not matter.
_BOOLS = ("bool",)
_UINTS = ("uint2", "uint4", "uint8", "uint16", "uint32", "uint64")
_INTS = ("int2", "int4", "int8", "int16", "int32", "int64")
_FLOAT8 = ("float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
_FLOATS = ("float4_e2m1fn",) + _FLOAT8 + ("bfloat16", "float16", "float32", "float64")
_COMPLEX = ("complex64", "complex128")

FAMILY_MEMBERS: dict[str, frozenset[str] | None] = {
    "bool": frozenset(_BOOLS),
    "uint": frozenset(_UINTS),
    "int": frozenset(_INTS),
    "integer": frozenset(_UINTS + _INTS),
    "float": frozenset(_FLOATS),
    "complex": frozenset(_COMPLEX),
    "inexact": frozenset(_FLOATS + _COMPLEX),
    "real": frozenset(_FLOATS + _UINTS + _INTS),
    "num": frozenset(_UINTS + _INTS + _FLOATS + _COMPLEX),
    "shaped": None,  # any dtype at all
}


@dataclass(frozen=True, slots=True)
class DTypeSpec:
    """What an annotation says about the dtype.

    exact: a canonical estimator dtype name ("bfloat16"), when the annotation names one dtype the
      cost model knows. family: "float", "int", "uint", "integer", "bool", "complex", "inexact",
      "real", "num" or "shaped", when it names a family. unmodelled: a single dtype jaxtyping knows
      but the estimator does not (`UInt16` -> "uint16", `Key` -> "prng_key"): known, not costable.
    """

    exact: str | None
    family: str | None
    unmodelled: str | None = None

    def members(self) -> frozenset[str] | None:
        """The jaxtyping dtype names this spec admits; None means any dtype."""
        if self.exact is not None:
            return frozenset((self.exact,))
        if self.unmodelled is not None:
            return frozenset((self.unmodelled,))
        if self.family is not None:
            return FAMILY_MEMBERS[self.family]
        return None

    def resolve(self, default: str) -> str | None:
        """The exact dtype, else `default` when it belongs to the family, else None.

        `default` may be any spelling the estimator knows (`fp32`, `torch.float32`); the answer is
        its canonical name.
        """
        if self.exact is not None:
            return self.exact
        if self.unmodelled is not None or self.family is None:
            return None
        known = lookup_dtype(default)
        name = known.name if known is not None else default
        members = FAMILY_MEMBERS[self.family]
        return name if members is None or name in members else None

    def intersect(self, other: DTypeSpec | None) -> DTypeSpec | None:
        """Both constraints at once (nested annotations); None when no dtype satisfies both."""
        if other is None:
            return self
        mine, theirs = self.members(), other.members()
        if mine is None:
            return other
        if theirs is None:
            return self
        common = mine & theirs
        if not common:
            return None
        if common == mine:
            return self
        if common == theirs:
            return other
        for family, members in FAMILY_MEMBERS.items():  # e.g. Real & Inexact = Float
            if members == common:
                return DTypeSpec(None, family)
        return DTypeSpec(None, None)  # a set no family names: dtype constrained, not resolvable


def _exact(name: str) -> DTypeSpec:
    if name in DTYPES:
        return DTypeSpec(name, None)
    return DTypeSpec(None, None, unmodelled=name)


DTYPE_CLASSES: dict[str, DTypeSpec] = {
    "Shaped": DTypeSpec(None, "shaped"),
    "Bool": DTypeSpec("bool", "bool"),  # one dtype (jaxtyping's "bool" and numpy's "bool_")
    "Num": DTypeSpec(None, "num"),
    "Inexact": DTypeSpec(None, "inexact"),
    "Float": DTypeSpec(None, "float"),
    "Complex": DTypeSpec(None, "complex"),
    "Integer": DTypeSpec(None, "integer"),
    "UInt": DTypeSpec(None, "uint"),
    "Int": DTypeSpec(None, "int"),
    "Real": DTypeSpec(None, "real"),
    "BFloat16": _exact("bfloat16"),
    "Float16": _exact("float16"),
    "Float32": _exact("float32"),
    "Float64": _exact("float64"),
    "Float4e2m1fn": _exact("float4_e2m1fn"),
    "Float8e4m3b11fnuz": _exact("float8_e4m3b11fnuz"),
    "Float8e4m3fn": _exact("float8_e4m3fn"),
    "Float8e4m3fnuz": _exact("float8_e4m3fnuz"),
    "Float8e5m2": _exact("float8_e5m2"),
    "Float8e5m2fnuz": _exact("float8_e5m2fnuz"),
    "Complex64": _exact("complex64"),
    "Complex128": _exact("complex128"),
    "Key": DTypeSpec(None, None, unmodelled="prng_key"),
}
for _bits in (2, 4, 8, 16, 32, 64):
    DTYPE_CLASSES[f"Int{_bits}"] = _exact(f"int{_bits}")
    DTYPE_CLASSES[f"UInt{_bits}"] = _exact(f"uint{_bits}")


def last_name(dotted: str) -> str:
    return dotted.rsplit(".", 1)[-1].strip()


def dtype_spec_for_class(name: str) -> DTypeSpec | None:
    """`Float`, `jaxtyping.BFloat16`, `jt.Int8` -> their DTypeSpec; anything else -> None."""
    return DTYPE_CLASSES.get(last_name(name))


# Array types by last name. Lower-case generic names (`array`) only with a module that owns them.
_ARRAY_LAST_NAMES = frozenset(
    ("Tensor", "Array", "ndarray", "NDArray", "ArrayLike", "DeviceArray", "ArrayImpl", "ShapedArray")
)
_ARRAY_DOTTED = frozenset(("mx.array", "mlx.core.array", "nn.Parameter", "torch.nn.Parameter"))


def is_array_type(dotted_name: str) -> bool:
    """torch.Tensor, Tensor, jax.Array, jnp.ndarray, np.ndarray, ArrayLike, NDArray, torch.FloatTensor, ..."""
    dotted = dotted_name.strip()
    last = last_name(dotted)
    if last in _ARRAY_LAST_NAMES or dotted in _ARRAY_DOTTED:
        return True
    # torch's legacy typed tensors: FloatTensor, LongTensor, BFloat16Tensor, cuda.HalfTensor, ...
    return last.endswith("Tensor") and last[:1].isupper() and last.isidentifier()
