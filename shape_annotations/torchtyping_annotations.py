"""torchtyping's `TensorType["batch", "seq", float]` as a TensorAnnotation.

torchtyping predates jaxtyping and is still found in older research code. Its items are read as
the lint layer hands them over: strings are dim names, AOther holds numbers (`3`; `-1` = any
size), `...`, and slices kept as source text (`"batch": 10` names a fixed dim, `"batch": ...` a
named variadic). `float` means torch's default float dtype (so a family), `int` torch.long,
`bool` torch.bool; layouts and `is_named` say nothing about shape or dtype and are skipped.
"""

from __future__ import annotations

from collections.abc import Callable

from estimator.dtypes import lookup_dtype

from .annotation_nodes import AName, ANode, ANone, AOther, AString, TensorAnnotation
from .dim_parser import parse_dim_expr
from .dim_records import Const, Sym, Unknown
from .dtype_classes import DTypeSpec
from .errors import ShapeError
from .jaxtyping_shapes import ParsedShape, ShapeDim, Variadic, render_shape
from .limits import MAX_DIMS, MAX_SIZE

_PY_DTYPES = {
    "float": DTypeSpec(None, "float"),
    "int": DTypeSpec("int64", None),
    "bool": DTypeSpec("bool", None),
}


class LocatedError(Exception):
    """A ShapeError together with the string literal its offset points into."""

    def __init__(self, error: ShapeError, string: AString | None) -> None:
        super().__init__(str(error))
        self.error = error
        self.string = string


def torchtyping_annotation(items: tuple[ANode, ...], resolve: Callable[[ANode], ANode]) -> TensorAnnotation | None:
    """`resolve` follows module-level aliases (a dim name held in a constant, say).

    None when an item is a slice we cannot read (it may be a fixed or a variadic dim, so not even
    the rank is known); any other unreadable item is one Unknown dim, keeping the rank right.
    """
    dims: list[ShapeDim | Variadic] = []
    dtype: DTypeSpec | None = None
    for raw in items:
        item = resolve(raw)
        dim: ShapeDim | Variadic | None = None
        if type(item) is AString:
            dim = ShapeDim(_string_dim(item))
        elif type(item) is AOther:
            text = item.text.strip()
            dim = _other_dim(text)
            if dim is None:
                if ":" in text:
                    return None
                dim = ShapeDim(Unknown(text or "_"))
        elif type(item) is AName:
            if item.dotted in ("Ellipsis", "..."):
                dim = Variadic(None)
            else:
                dtype = _dtype(item.dotted) or dtype
        elif type(item) is ANone:
            continue
        if dim is None:
            continue
        if type(dim) is Variadic and any(type(d) is Variadic for d in dims):
            raise LocatedError(ShapeError("TensorType allows one `...` (or named `...`) at most"), None)
        if len(dims) >= MAX_DIMS:
            raise LocatedError(ShapeError(f"more than {MAX_DIMS} dims; refused"), None)
        dims.append(dim)
    shape = ParsedShape(tuple(dims))
    return TensorAnnotation(dtype, ParsedShape(shape.dims, render_shape(shape)), "torch.Tensor")


def _string_dim(item: AString) -> Sym | Const | Unknown:
    text = item.text.strip()
    if text.isidentifier():
        return Sym(text)
    try:
        expr = parse_dim_expr(item.text, allow_unknown=False)
    except ShapeError as err:
        raise LocatedError(err, item) from None
    return expr  # type: ignore[return-value]


def _int(text: str) -> int | None:
    body = text[1:] if text.startswith("-") else text
    if not body.isdigit() or len(body) > 20:
        return None
    return int(text)


def _other_dim(text: str) -> ShapeDim | Variadic | None:
    if text in ("...", "Ellipsis"):
        return Variadic(None)
    value = _int(text)
    if value is not None:
        return _sized(value, None)
    if ":" in text and text[:1] in "\"'":
        quote = text[0]
        close = text.find(quote, 1)
        name = text[1:close] if close > 0 else ""
        rest = text[close + 1:].strip() if close > 0 else ""
        if name.isidentifier() and rest.startswith(":"):
            size = rest[1:].strip()
            if size in ("...", "Ellipsis"):
                return Variadic(name)
            value = _int(size)
            if value is not None:
                return _sized(value, name)
    return None


def _sized(value: int, name: str | None) -> ShapeDim:
    if value == -1:  # torchtyping: any size
        return ShapeDim(Sym(name)) if name else ShapeDim(Unknown("_"))
    if value < 0 or value > MAX_SIZE:
        raise LocatedError(ShapeError(f"invalid TensorType size {value}"), None)
    return ShapeDim(Const(value), doc_name=name)


def _dtype(dotted: str) -> DTypeSpec | None:
    if dotted in _PY_DTYPES:
        return _PY_DTYPES[dotted]
    if "." not in dotted:
        return None
    found = lookup_dtype(dotted)
    return DTypeSpec(found.name, None) if found is not None else None
