"""Human units for exact numbers: `34.4 GB`, `2.2 TFLOP`, `9.437 µs`.

Bytes use SI prefixes (as datasheets quote bandwidth); `format_bytes_binary` gives the IEC form
budgets are usually written in (`256 MiB`).
"""

from __future__ import annotations

from decimal import Decimal, ROUND_HALF_EVEN

_SI = ((10**18, "E"), (10**15, "P"), (10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "k"))
_IEC = ((2**60, "Ei"), (2**50, "Pi"), (2**40, "Ti"), (2**30, "Gi"), (2**20, "Mi"), (2**10, "Ki"))


def significant(value: Decimal, digits: int) -> str:
    """`value` rounded to `digits` significant figures, trailing zeros dropped, no exponent."""
    if value == 0:
        return "0"
    exponent = value.adjusted()
    quantum = Decimal(1).scaleb(exponent - digits + 1)
    rounded = value.quantize(quantum, rounding=ROUND_HALF_EVEN)
    text = format(rounded, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _scaled(value: int | Decimal, table, unit: str, digits: int) -> str:
    number = Decimal(value)
    for scale, prefix in table:
        if abs(number) >= scale:
            return f"{significant(number / scale, digits)} {prefix}{unit}"
    return f"{significant(number, digits)} {unit}"


def format_bytes(count: int) -> str:
    return _scaled(count, _SI, "B", 3)


def format_bytes_binary(count: int) -> str:
    return _scaled(count, _IEC, "B", 4)


def format_flops(count: int) -> str:
    return _scaled(count, _SI, "FLOP", 3)


def format_rate(value: Decimal, unit: str) -> str:
    return _scaled(value, _SI, unit, 4)


def format_seconds(seconds: Decimal) -> str:
    value = Decimal(seconds)
    for scale, unit in ((Decimal(1), "s"), (Decimal("1e-3"), "ms"), (Decimal("1e-6"), "µs")):
        if value >= scale:
            return f"{significant(value / scale, 4)} {unit}"
    return f"{significant(value / Decimal('1e-9'), 4)} ns"


def round_fixed(value: Decimal, places: int) -> str:
    """Fixed decimals, half-even: the `key=value` lines of `tensorcost estimate`."""
    return format(Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN), "f")
