"""Result dtypes of ops whose dtype is not their input's, as torch's type promotion gives them
(checked against torch's OpInfo samples in tests/conformance).

Each rule maps a receiver dtype name (or None, unknown) to the result's; a framework other than
torch returns None where numpy or jax promote differently, since unknown beats wrong.
"""

from __future__ import annotations

_FLOATS = frozenset({"float64", "float32", "bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"})
_COMPLEX_PARTS = {"complex64": "float32", "complex128": "float64"}
_INTEGRAL = frozenset({"int64", "int32", "int16", "int8", "uint8", "bool"})
# torch's default float dtype: what integer inputs of a float op (exp, sqrt, true division) become.
DEFAULT_FLOAT = "float32"


def is_integral(dtype: str | None) -> bool:
    return dtype in _INTEGRAL


def is_floating(dtype: str | None) -> bool:
    return dtype in _FLOATS


def float_result(dtype: str | None, framework: str | None = "torch") -> str | None:
    """exp, log, sin, sqrt, sigmoid, reciprocal, `/`: integers and bools become the default float."""
    if is_integral(dtype):
        return DEFAULT_FLOAT if framework == "torch" else None
    return dtype


def real_result(dtype: str | None, framework: str | None = "torch") -> str | None:
    """abs, norm, std, var: a complex input gives its real part's dtype."""
    return _COMPLEX_PARTS.get(dtype, dtype)


def real_float_result(dtype: str | None, framework: str | None = "torch") -> str | None:
    """norms and std/var of integers are refused by torch, so only floats and complex are read."""
    return real_result(dtype, framework) if not is_integral(dtype) else None


def accumulated(dtype: str | None, framework: str | None = "torch") -> str | None:
    """sum, prod, cumsum, cumprod: torch accumulates integers and bools as int64."""
    if is_integral(dtype):
        return "int64" if framework == "torch" else None
    return dtype


def truth(dtype: str | None, framework: str | None = "torch") -> str | None:
    """any, all: bool, except that torch keeps uint8 as uint8."""
    if dtype is None:
        return None
    return "uint8" if dtype == "uint8" and framework == "torch" else "bool"


def squared(dtype: str | None, framework: str | None = "torch") -> str | None:
    """square: bools are raised as int64 (torch.pow(bool, 2))."""
    if dtype == "bool":
        return "int64" if framework == "torch" else None
    return dtype


def double_result(dtype: str | None, framework: str | None = "torch") -> str | None:
    """float_power computes in double precision: float64, or complex128 for complex inputs."""
    if dtype is None or framework not in ("torch", None):
        return None
    return "complex128" if dtype in _COMPLEX_PARTS else "float64"


def same(dtype: str | None, framework: str | None = "torch") -> str | None:
    return dtype
