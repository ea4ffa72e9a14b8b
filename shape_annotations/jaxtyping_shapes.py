"""jaxtyping shape strings: `"batch seq d_model"`, `"*batch #c d-1"`, `"rows=3 _ ..."`, `""`.

The grammar and its refusals follow jaxtyping's own parser (`_make_array_cached` in
jaxtyping/_array_types.py), token by token, so that we reject exactly what jaxtyping rejects
(`*4`, `_4`, `#_`, `a, b`, two variadics, `??x`) and accept the rest. Symbolic dims, which jaxtyping
evaluates as Python, go through our own expression grammar; `{f-string}` fields and calls are
UnsupportedShape. Every error's offset is inside the shape string.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dim_parser import parse_dim_expr
from .dim_records import Const, DimExpr, Sym, Unknown, render_dim
from .dtype_classes import DTYPE_CLASSES, DTypeSpec, dtype_spec_for_class, is_array_type
from .errors import ShapeError, UnsupportedShape
from .limits import MAX_DIMS, MAX_SIZE, check_text_size

__all__ = [
    "DTYPE_CLASSES",
    "DTypeSpec",
    "ParsedShape",
    "ShapeDim",
    "Variadic",
    "dtype_spec_for_class",
    "is_array_type",
    "parse_shape_string",
    "render_shape",
]


@dataclass(frozen=True, slots=True)
class ShapeDim:
    """One axis. `#` makes it broadcastable (size 1 also accepted); `rows=` is documentation only;
    `?` (treepath) lets its size vary across a PyTree, which within one array changes nothing."""

    expr: DimExpr
    broadcastable: bool = False
    doc_name: str | None = None
    treepath: bool = False


@dataclass(frozen=True, slots=True)
class Variadic:
    """Zero or more axes: `*batch`, `#*batch` (broadcastable), or `...` (name None)."""

    name: str | None
    broadcastable: bool = False
    treepath: bool = False


def _dim_key(dim: ShapeDim | Variadic) -> object:
    if type(dim) is ShapeDim and type(dim.expr) is Unknown:
        # Unknown equals nothing as a dimension, but two parses of `_` are the same annotation.
        return ("unknown", dim.expr.label, dim.broadcastable, dim.doc_name, dim.treepath)
    return dim


@dataclass(frozen=True, slots=True, eq=False)
class ParsedShape:
    """The axes of one annotation, in order; `text` is the source string (not compared).

    Equality is that of the annotation: two parses of `"b _"` are equal even though their
    Unknown dims are not the same dimension.
    """

    dims: tuple[ShapeDim | Variadic, ...]
    text: str = ""

    def __eq__(self, other: object) -> bool:
        if type(other) is not ParsedShape:
            return NotImplemented
        return tuple(map(_dim_key, self.dims)) == tuple(map(_dim_key, other.dims))

    def __hash__(self) -> int:
        return hash(tuple(map(_dim_key, self.dims)))

    @property
    def has_variadic(self) -> bool:
        return self.variadic_index is not None

    @property
    def variadic_index(self) -> int | None:
        for index, dim in enumerate(self.dims):
            if type(dim) is Variadic:
                return index
        return None

    @property
    def fixed_rank(self) -> int | None:
        """The rank when no axis is variadic, else None."""
        return None if self.has_variadic else len(self.dims)

    @property
    def min_rank(self) -> int:
        return sum(1 for d in self.dims if type(d) is ShapeDim)

    def exprs(self) -> tuple[DimExpr, ...] | None:
        """The dimension of every axis, or None when the rank is not fixed."""
        if self.has_variadic:
            return None
        return tuple(d.expr for d in self.dims)  # type: ignore[union-attr]


def _tokens(text: str) -> list[tuple[str, int]]:
    """Whitespace-separated tokens with their offsets (str.split semantics, positions kept)."""
    out: list[tuple[str, int]] = []
    start = None
    for i, ch in enumerate(text):
        if ch.isspace():
            if start is not None:
                out.append((text[start:i], start))
                start = None
        elif start is None:
            start = i
    if start is not None:
        out.append((text[start:], start))
    return out


def parse_shape_string(text: str) -> ParsedShape:
    """Parse a jaxtyping shape string; raise ShapeError (offset inside `text`) where jaxtyping would."""
    if type(text) is not str:
        raise ShapeError("a shape must be a string", None)
    check_text_size(text, "shape string")
    dims: list[ShapeDim | Variadic] = []
    variadic_at: int | None = None
    for token, start in _tokens(text):
        if len(dims) >= MAX_DIMS:
            raise ShapeError(f"more than {MAX_DIMS} dims; refused", start, len(token))
        dim = _parse_token(token, start)
        if type(dim) is Variadic:
            if variadic_at is not None:
                raise ShapeError(
                    "cannot use variadic specifiers (`*name` or `...`) more than once", start, len(token)
                )
            variadic_at = start
        dims.append(dim)
    return ParsedShape(tuple(dims), text)


def _parse_token(token: str, start: int) -> ShapeDim | Variadic:
    def fail(message: str, at: int = 0, length: int | None = None, cls: type[ShapeError] = ShapeError):
        raise cls(message, start + at, len(token) - at if length is None else length)

    comma = token.find(",")
    if comma >= 0 and "(" not in token:
        fail("axes are separated with spaces, not commas", comma, 1)
    if token.endswith("#"):
        fail("broadcastable axes are marked with # at the start (`#name`), not the end", len(token) - 1, 1)
    brace = token.find("{")
    if brace >= 0:
        close = token.find("}", brace)
        fail(
            f"f-string field {token[brace:close + 1 if close >= 0 else None]!r} needs the running program's values",
            brace,
            (close - brace + 1) if close >= 0 else None,
            UnsupportedShape,
        )
    if "..." in token:
        if token != "...":
            fail(f"'...' must be used on its own, got {token!r}")
        return Variadic(None)

    broadcastable = variadic = anonymous = treepath = False
    doc_name: str | None = None
    elem, at = token, 0  # `at`: offset of `elem` inside the token
    while elem:
        first = elem[0]
        if first == "#":
            if broadcastable:
                fail("do not use # twice to denote broadcastability (`##foo`)", at, 1)
            broadcastable = True
        elif first == "*":
            if variadic:
                fail("do not use * twice to denote multiple axes (`**foo`)", at, 1)
            variadic = True
        elif first == "_":
            if anonymous:
                fail("do not use _ twice to denote anonymity (`__foo`)", at, 1)
            anonymous = True
        elif first == "?":
            if treepath:
                fail("do not use ? twice to denote PyTree dependence (`??foo`)", at, 1)
            treepath = True
        elif elem.count("=") == 1:
            doc, elem = elem.split("=")
            doc_name = doc
            at += len(doc) + 1
            continue
        else:
            break
        elem, at = elem[1:], at + 1

    if not elem or elem.isidentifier():
        return _named(token, start, elem, at, broadcastable, variadic, anonymous, treepath, doc_name)
    try:
        value = int(elem)
    except ValueError:
        value = None
    if value is not None:
        if variadic:
            fail("a fixed axis cannot bind to multiple axes (`*4` is not allowed)")
        if anonymous:
            fail("a fixed axis cannot be anonymous (`_4` is not allowed)")
        if treepath:
            fail("a fixed axis cannot depend on PyTree location (`?4` is not allowed)")
        if value < 0:
            fail(f"negative size {value}", at)
        if value > MAX_SIZE:
            fail(f"size {value} exceeds 2**63-1", at)
        return ShapeDim(Const(value), broadcastable, doc_name)
    if anonymous:
        fail("a symbolic axis cannot be anonymous (`_foo+bar` is not allowed)")
    if variadic:
        fail("a symbolic axis cannot be variadic (`*foo+bar` is not allowed)")
    if treepath:
        fail("a symbolic axis cannot depend on PyTree location (`?foo+bar` is not allowed)")
    try:
        expr = parse_dim_expr(elem, allow_unknown=False)
    except ShapeError as err:
        raise err.shifted(start + at) from None
    return ShapeDim(expr, broadcastable, doc_name)


def _named(
    token: str,
    start: int,
    name: str,
    at: int,
    broadcastable: bool,
    variadic: bool,
    anonymous: bool,
    treepath: bool,
    doc_name: str | None,
) -> ShapeDim | Variadic:
    if anonymous:
        if broadcastable:
            raise ShapeError("an axis cannot be both anonymous and broadcastable (`#_`)", start, len(token))
        if variadic:
            return Variadic(None)
        return ShapeDim(Unknown("_" + name), False, doc_name, treepath)
    if not name:
        if treepath and not (broadcastable or variadic or doc_name is not None):
            return ShapeDim(Unknown("?"))  # a bare `?`: a dim nothing is said about
        raise ShapeError(f"axis {token!r} has no name", start + at if at < len(token) else start, len(token))
    if variadic:
        return Variadic(name, broadcastable, treepath)
    return ShapeDim(Sym(name), broadcastable, doc_name, treepath)


def render_token(dim: ShapeDim | Variadic) -> str:
    prefix = ("#" if dim.broadcastable else "") + ("?" if dim.treepath else "")
    if type(dim) is Variadic:
        return "..." if dim.name is None else f"{prefix}*{dim.name}"
    doc = "" if dim.doc_name is None else f"{dim.doc_name}="
    expr = dim.expr
    if type(expr) is Unknown:
        label = expr.label if expr.label == "?" or expr.label.startswith("_") else "_"
        return f"{doc}{prefix}{label}"
    return f"{prefix}{doc}{render_dim(expr)}"


def render_shape(parsed: ParsedShape) -> str:
    """Text that parses back to an equal ParsedShape (`""` for a scalar)."""
    return " ".join(render_token(d) for d in parsed.dims)

