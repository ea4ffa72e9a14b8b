"""A strict reader for one mapping of a user's file: every key known, every type checked.

Each failure is a ConfigError naming the file, the dotted key and the reason, so a user sees
`tensorcost.yaml: budgets.quadratic_bytes: expected a byte size ...` and nothing else.
"""

from __future__ import annotations

import datetime as _dt
import math
from decimal import Decimal, InvalidOperation

from .errors import ConfigError


# Every number a user's file gives is within 1e-30 .. 1e30 in magnitude and 34 significant digits
# (Decimal's default precision): room for FLOP rates (1e15), byte rates and picosecond budgets,
# and no value whose exact arithmetic or printed form is unbounded.
NUMBER_EXPONENT_LIMIT = 30
NUMBER_DIGIT_LIMIT = 34


def _short(value: object) -> str:
    """`value` as a message may show it: long text cut, a huge integer by its size only (str() of
    an integer past 4,300 digits raises, and no one reads 5,000 digits in an error)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**40:
        return f"an integer of {integer_digits(value)} digits"
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


def integer_digits(value: int) -> int:
    """Decimal digits of `value`, without str() (which refuses past sys.get_int_max_str_digits())."""
    magnitude = abs(value)
    digits = max(1, int(magnitude.bit_length() * 0.30102999566398120))  # log10(2)
    while magnitude >= 10**digits:
        digits += 1
    while digits > 1 and magnitude < 10**(digits - 1):
        digits -= 1
    return digits


def key_path(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


class MappingReader:
    def __init__(self, value: object, source: str, prefix: str = "") -> None:
        if not isinstance(value, dict):
            what = "a list" if isinstance(value, list) else type(value).__name__
            raise ConfigError(source, prefix or "(top level)", f"expected a mapping, got {what}")
        for key in value:
            if not isinstance(key, str):
                raise ConfigError(source, prefix or "(top level)", f"keys must be strings, got {key!r}")
        self.value = value
        self.source = source
        self.prefix = prefix
        self._seen: set[str] = set()

    def error(self, key: str, reason: str) -> ConfigError:
        return ConfigError(self.source, key_path(self.prefix, self.spelling(key)), reason)

    def spelling(self, key: str) -> str:
        """The key as the file spells it: `extend_select` or, as ruff and flake8 users write it,
        `extend-select`. Both at once is ambiguous, so it is refused."""
        kebab = key.replace("_", "-")
        if kebab != key and kebab in self.value:
            if key in self.value:
                raise self.error(kebab, f"given twice, as {key} and {kebab}")
            return kebab
        return key

    def has(self, key: str) -> bool:
        return self.spelling(key) in self.value

    def raw(self, key: str, default=None, *, required: bool = False):
        key = self.spelling(key)
        self._seen.add(key)
        if key not in self.value:
            if required:
                raise self.error(key, "required key is missing")
            return default
        return self.value[key]

    def text(self, key: str, default: str | None = None, *, required: bool = False) -> str | None:
        value = self.raw(key, default, required=required)
        if value is default and not required:
            return value
        if isinstance(value, (_dt.date, int, float)) and not isinstance(value, bool):
            value = value.isoformat() if isinstance(value, _dt.date) else str(value)
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, f"expected a non-empty string, got {value!r}")
        return value

    def choice(self, key: str, choices, default: str | None = None, *, required: bool = False):
        value = self.raw(key, default, required=required)
        if value not in choices:
            raise self.error(key, f"expected one of {', '.join(choices)}, got {value!r}")
        return value

    def integer(self, key: str, default: int | None = None, *, minimum: int = 1, required: bool = False):
        value = self.raw(key, default, required=required)
        if value is None and not required:
            return None
        return self.check_integer(key, value, minimum)

    def check_integer(self, key: str, value: object, minimum: int = 1) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"expected an integer, got {_short(repr(value))}")
        if value < minimum:
            bound = "positive" if minimum == 1 else f">= {minimum}"
            raise self.error(key, f"must be {bound}, got {_short(value)}")
        if value > 2**63 - 1:
            raise self.error(key, f"count overflow: {_short(value)} exceeds 2**63-1")
        return value

    def boolean(self, key: str, default: bool = False) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value

    def number(self, key: str, *, required: bool = True, positive: bool = True) -> Decimal | None:
        value = self.raw(key, None, required=required)
        if value is None:
            return None
        return self.check_number(key, value, positive)

    def check_number(self, key: str, value: object, positive: bool = True, *,
                     minimum: Decimal | None = None, maximum: Decimal | None = None) -> Decimal:
        """Exact Decimal from an int, a YAML float, or text like `989.4e12` (which YAML 1.1 keeps
        as a string because its exponent has no sign). Bounded: `1e100000000` as a Fraction builds
        a 10**100000000 integer (a hang), and `1e-100000` prints as 100 KB in every message."""
        if isinstance(value, bool):
            raise self.error(key, f"expected a number, got {value!r}")
        if isinstance(value, float):
            if not math.isfinite(value):
                raise self.error(key, f"expected a finite number, got {value!r}")
            number = Decimal(repr(value))
        elif isinstance(value, int):
            number = Decimal(value)
        elif isinstance(value, str) and len(value) <= 64:
            try:
                number = Decimal(value.strip().replace("_", ""))
            except InvalidOperation:
                raise self.error(key, f"expected a number, got {value!r}") from None
            if not number.is_finite():
                raise self.error(key, f"expected a finite number, got {value!r}")
        else:
            raise self.error(key, f"expected a number, got {value!r}")
        if positive and number <= 0:
            raise self.error(key, f"must be positive, got {value}")
        if number and not -NUMBER_EXPONENT_LIMIT <= number.adjusted() <= NUMBER_EXPONENT_LIMIT:
            raise self.error(key, f"out of range: {_short(value)} is not within 1e-{NUMBER_EXPONENT_LIMIT} .. "
                                  f"1e{NUMBER_EXPONENT_LIMIT} in magnitude")
        if len(number.as_tuple().digits) > NUMBER_DIGIT_LIMIT:
            raise self.error(key, f"too precise: {_short(value)} has more than {NUMBER_DIGIT_LIMIT} significant digits")
        if minimum is not None and number < minimum:
            raise self.error(key, f"out of range: {_short(value)} is below the minimum {minimum}")
        if maximum is not None and number > maximum:
            raise self.error(key, f"out of range: {_short(value)} is above the maximum {maximum}")
        return number

    def mapping(self, key: str, *, required: bool = False) -> "MappingReader | None":
        value = self.raw(key, None, required=required)
        if value is None and not required:
            return None
        return MappingReader(value, self.source, key_path(self.prefix, self.spelling(key)))

    def sequence(self, key: str, *, required: bool = False) -> list:
        value = self.raw(key, [] if not required else None, required=required)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(key, f"expected a list, got {type(value).__name__}")
        return value

    def records(self, key: str, *, required: bool = False) -> list["MappingReader"]:
        items = self.sequence(key, required=required)
        return [
            MappingReader(item, self.source, f"{key_path(self.prefix, self.spelling(key))}[{index}]")
            for index, item in enumerate(items)
        ]

    def allow_only(self, keys) -> None:
        """Refuse unknown keys up front, so a typo is named before any missing-key complaint."""
        known = set(keys) | {key.replace("_", "-") for key in keys}
        for key in self.value:
            if key not in known:
                raise self.error(key, "unknown key")

    def finish(self) -> None:
        """Refuse keys nobody read: a typo must not silently fall back to a default."""
        unknown = [key for key in self.value if key not in self._seen]
        if unknown:
            raise self.error(unknown[0], "unknown key")
