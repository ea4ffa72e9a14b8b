"""Where dim sizes come from, and which wins: config `dims` < file pragma < CLI `--dim`.

The CLI is what a user typed for this run, so it overrides the file; the pragma is specific to
one file, so it overrides the project config.
"""

from __future__ import annotations

from collections.abc import Mapping

from .errors import ShapeError
from .limits import MAX_SIZE


def merge_dim_bindings(
    config: Mapping[str, int], pragma: Mapping[str, int], cli: Mapping[str, int]
) -> dict[str, int]:
    merged: dict[str, int] = {}
    for source, sizes in (("config", config), ("pragma", pragma), ("--dim", cli)):
        for name, value in sizes.items():
            merged[name] = validate_size(source, name, value)
    return merged


def validate_size(source: str, name: object, value: object) -> int:
    """A positive int (not bool) no larger than 2**63-1, under a dim name that is an identifier."""
    if type(name) is not str or not name.isidentifier():
        raise ShapeError(f"{source}: invalid dim name {name!r}")
    if type(value) is not int:
        raise ShapeError(f"{source}: size of {name!r} must be an integer, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise ShapeError(f"{source}: size of {name!r} must be positive, got {value}")
    if value > MAX_SIZE:
        raise ShapeError(f"{source}: size of {name!r} exceeds 2**63-1")
    return value
