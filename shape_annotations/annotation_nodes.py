"""Plain records for annotation expressions, and what interpreting one yields.

The lint layer converts LibCST annotation nodes into these standard-library records (this package
never sees LibCST); interpret_annotation (annotation_trees.py) reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .dtype_classes import DTypeSpec
from .errors import ShapeError
from .jaxtyping_shapes import ParsedShape


@dataclass(frozen=True, slots=True)
class AName:
    """A name or dotted name as written: `Float`, `torch.Tensor`, `jt.BFloat16`."""

    dotted: str


@dataclass(frozen=True, slots=True)
class ASubscript:
    """`value[items...]`: `Float[Tensor, "b s"]`, `Optional[X]`, `TensorType["b", float]`."""

    value: AName
    items: tuple[ANode, ...]


@dataclass(frozen=True, slots=True)
class AString:
    """A string literal; start_offset is where its *contents* start in the annotation's source
    line, so an error offset inside `text` plus start_offset is the column to report."""

    text: str
    start_offset: int


@dataclass(frozen=True, slots=True)
class AUnion:
    """`X | Y | ...`."""

    options: tuple[ANode, ...]


@dataclass(frozen=True, slots=True)
class ANone:
    """The `None` of `X | None`."""


@dataclass(frozen=True, slots=True)
class AOther:
    """Anything else, kept as source text: numbers (`3`, `-1`), `...`, slices (`"batch": 10`)."""

    text: str


ANode = Union[AName, ASubscript, AString, AUnion, ANone, AOther]


@dataclass(frozen=True, slots=True)
class TensorAnnotation:
    """One way the annotated value may be shaped. dtype None: the annotation names no dtype."""

    dtype: DTypeSpec | None
    shape: ParsedShape
    array_type: str


@dataclass(frozen=True, slots=True)
class AnnotationResult:
    """Every tensor form the annotation allows (several for a union of ranks), and at most one
    error. error_string is the string literal the error's offset points into (None when the
    error belongs to the annotation as a whole)."""

    candidates: tuple[TensorAnnotation, ...] = ()
    error: ShapeError | None = None
    error_string: AString | None = None
