"""interpret_annotation: which tensor shapes (and dtypes) an annotation allows.

Reads the forms users write around jaxtyping: `Float[Tensor, "b s d"]`, module-level aliases
(`Scores = Float[Tensor, "batch heads q k"]`), `Optional[X]`, `X | None`, `Union[A, B]` (every
tensor option is kept: a function may take several ranks), string forward references, nested
array types (`Float[Image, "batch"]` prepends `batch`, dtypes intersect as in jaxtyping),
`Annotated[X, ...]`, and torchtyping's `TensorType[...]`. Anything else is not a tensor
annotation: no candidates, no error.
"""

from __future__ import annotations

from collections.abc import Mapping

from .annotation_nodes import (
    AName,
    ANode,
    ANone,
    AnnotationResult,
    AOther,
    AString,
    ASubscript,
    AUnion,
    TensorAnnotation,
)
from .annotation_text import parse_annotation_text
from .dtype_classes import DTypeSpec, dtype_spec_for_class, is_array_type, last_name
from .errors import ShapeError, UnsupportedShape
from .jaxtyping_shapes import ParsedShape, parse_shape_string
from .torchtyping_annotations import LocatedError, torchtyping_annotation

__all__ = [
    "AName",
    "ANode",
    "ANone",
    "AOther",
    "AString",
    "ASubscript",
    "AUnion",
    "AnnotationResult",
    "TensorAnnotation",
    "interpret_annotation",
]

# Aliases can chain (`A = B`, `B = Float[...]`) and, in broken code, loop; 16 hops is plenty.
MAX_ALIAS_DEPTH = 16
_WRAPPERS = frozenset(("Annotated", "Final", "ClassVar", "Required", "NotRequired", "ReadOnly"))
# jaxtyping's own aliases (docs: "JAX-specific types").
_JAXTYPING_SCALARS = {
    "jaxtyping.Scalar": "jax.Array",
    "jaxtyping.ScalarLike": "jax.typing.ArrayLike",
}


def interpret_annotation(node: ANode, aliases: Mapping[str, ANode]) -> AnnotationResult:
    interpreter = _Interpreter(aliases)
    candidates = interpreter.annotation(node, 0)
    unique = tuple(dict.fromkeys(candidates))
    if interpreter.error is not None:
        return AnnotationResult(unique, interpreter.error.error, interpreter.error.string)
    return AnnotationResult(unique)


class _Interpreter:
    def __init__(self, aliases: Mapping[str, ANode]) -> None:
        self.aliases = aliases
        self.error: LocatedError | None = None

    def resolve(self, node: ANode, depth: int = 0) -> ANode:
        """Follow module-level aliases of a name (`Scores`, `F = jaxtyping.Float`)."""
        while type(node) is AName and node.dotted in self.aliases and depth < MAX_ALIAS_DEPTH:
            node = self.aliases[node.dotted]
            depth += 1
        return node

    def annotation(self, node: ANode, depth: int) -> list[TensorAnnotation]:
        """Every tensor candidate of an annotation; the first error is recorded, not raised."""
        try:
            return self._annotation(node, depth)
        except LocatedError as located:
            if self.error is None:
                self.error = located
            return []

    def _annotation(self, node: ANode, depth: int) -> list[TensorAnnotation]:
        if depth > MAX_ALIAS_DEPTH:
            return []
        if type(node) is AName:
            if node.dotted in self.aliases:
                return self.annotation(self.aliases[node.dotted], depth + 1)
            return self._jaxtyping_scalar(node.dotted)
        if type(node) is AString:
            return self.annotation(parse_annotation_text(node.text, node.start_offset), depth + 1)
        if type(node) is AUnion:
            return [c for option in node.options for c in self.annotation(option, depth + 1)]
        if type(node) is ASubscript:
            return self._subscript(node, depth)
        return []

    def _subscript(self, node: ASubscript, depth: int) -> list[TensorAnnotation]:
        value = self.resolve(node.value)
        if type(value) is not AName:
            return []
        name = value.dotted
        last, items = last_name(name), node.items
        if last == "Optional" and len(items) == 1:
            return self.annotation(items[0], depth + 1)
        if last == "Union":
            return [c for item in items for c in self.annotation(item, depth + 1)]
        if last in _WRAPPERS and items:
            return self.annotation(items[0], depth + 1)
        if last == "TensorType":
            candidate = torchtyping_annotation(items, self.resolve)
            return [] if candidate is None else [candidate]
        spec = dtype_spec_for_class(name)
        if spec is not None and len(items) == 2:
            return self._jaxtyping(spec, items[0], items[1], depth, strict=True)
        if spec is None and len(items) == 2 and self._plain_array(items[0]):
            # A project's own AbstractDtype subclass (`UInt8or16[Tensor, "b"]`): the shape is still
            # jaxtyping's; a string that does not parse is not reported, the class may be anything.
            return self._jaxtyping(None, items[0], items[1], depth, strict=False)
        return []

    def _plain_array(self, node: ANode) -> bool:
        node = self.resolve(node)
        return type(node) is AName and is_array_type(node.dotted)

    def _jaxtyping_scalar(self, dotted: str) -> list[TensorAnnotation]:
        array = _JAXTYPING_SCALARS.get(dotted)
        if array is None:
            return []
        return [TensorAnnotation(DTypeSpec(None, "shaped"), ParsedShape((), ""), array)]

    def _shape(self, node: ANode) -> tuple[ParsedShape, AString | None]:
        resolved = self.resolve(node)
        if type(resolved) is AString:
            try:
                return parse_shape_string(resolved.text), resolved
            except ShapeError as err:
                raise LocatedError(err, resolved) from None
        if type(resolved) is AOther and resolved.text[:2].lower() in ('f"', "f'"):
            raise LocatedError(UnsupportedShape("an f-string shape needs the running program's values"), None)
        raise LocatedError(UnsupportedShape("the shape is not a string literal we can read"), None)

    def _jaxtyping(
        self, spec: DTypeSpec | None, array: ANode, shape_node: ANode, depth: int, strict: bool
    ) -> list[TensorAnnotation]:
        try:
            shape, string = self._shape(shape_node)
        except LocatedError:
            if strict:
                raise
            return []
        out: list[TensorAnnotation] = []
        for array_type, inner in self._array_types(array, depth + 1):
            if inner is None:
                out.append(TensorAnnotation(spec, shape, array_type))
            else:
                out.append(_nested(spec, shape, string, inner))
        return out

    def _array_types(self, node: ANode, depth: int) -> list[tuple[str, TensorAnnotation | None]]:
        """(array type, inner annotation) per option of the array slot: jaxtyping unpacks unions,
        and an existing jaxtyping annotation in the slot is extended (nested array types)."""
        if depth > MAX_ALIAS_DEPTH:
            return []
        node = self.resolve(node)
        if type(node) is AName:
            return [(node.dotted, None)]
        if type(node) is AUnion:
            return [t for option in node.options for t in self._array_types(option, depth + 1)]
        if type(node) is AString:
            return self._array_types(parse_annotation_text(node.text, node.start_offset), depth + 1)
        if type(node) is ASubscript:
            last = last_name(node.value.dotted)
            if last in ("Union", "Optional"):
                return [t for item in node.items for t in self._array_types(item, depth + 1)]
            return [(c.array_type, c) for c in self.annotation(node, depth + 1)]
        return []


def _nested(
    outer_dtype: DTypeSpec | None, outer: ParsedShape, string: AString | None, inner: TensorAnnotation
) -> TensorAnnotation:
    """`Float[Image, "batch"]`: outer dims first, then the inner annotation's; dtypes intersect."""
    if outer.has_variadic and inner.shape.has_variadic:
        index = outer.variadic_index
        offset = _token_offset(outer, index)
        raise LocatedError(
            ShapeError("cannot use variadic specifiers (`*name` or `...`) in both outer and inner annotation", offset),
            string,
        )
    if outer_dtype is None:
        dtype = inner.dtype
    elif inner.dtype is None:
        dtype = outer_dtype
    else:
        dtype = outer_dtype.intersect(inner.dtype)
        if dtype is None:
            raise LocatedError(
                ShapeError("the outer and inner dtype classes share no dtype (use Shaped for the outer one)"), None
            )
    text = f"{outer.text} {inner.shape.text}".strip()
    return TensorAnnotation(dtype, ParsedShape(outer.dims + inner.shape.dims, text), inner.array_type)


def _token_offset(shape: ParsedShape, index: int | None) -> int | None:
    """Offset of the index-th whitespace-separated token of shape.text (for nested errors)."""
    if index is None:
        return None
    count, i, text = -1, 0, shape.text
    while i < len(text):
        if not text[i].isspace() and (i == 0 or text[i - 1].isspace()):
            count += 1
            if count == index:
                return i
        i += 1
    return None

