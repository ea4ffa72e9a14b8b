"""LibCST annotation nodes → `shape_annotations` plain trees, and trees → tensor facts.

`shape_annotations` knows the grammars but not LibCST; this module is the translation, and it keeps
the string's position so a bad shape string is reported at its exact column.
"""

from __future__ import annotations

import ast

import libcst as cst

from shape_annotations import (
    AName,
    ANone,
    AOther,
    AString,
    ASubscript,
    AUnion,
    Sym,
    UnsupportedShape,
    Variadic,
    interpret_annotation,
)

from .facts import ANNOTATION, TensorFact
from .problems import Unparseable
from .imports import dotted_name


_STRING_PREFIX_CHARS = "rRbBuUfF"


def string_literal(node: cst.SimpleString) -> tuple[str, int] | None:
    """(contents, offset of the contents within the token) of a string literal, decoded without
    evaluating code: only escape sequences of a plain literal are interpreted."""
    token = node.value
    prefix_length = 0
    while prefix_length < len(token) and token[prefix_length] in _STRING_PREFIX_CHARS:
        prefix_length += 1
    prefix = token[:prefix_length].lower()
    if "b" in prefix:
        return None
    body = token[prefix_length:]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    contents = body[len(quote): len(body) - len(quote)]
    if "\\" in contents and "r" not in prefix:
        try:
            contents = ast.literal_eval(quote + contents + quote)  # a literal only, never code
        except (ValueError, SyntaxError):
            return None
    return contents, prefix_length + len(quote)


class _TreeBuilder:
    """Builds the plain tree of one annotation; string offsets count characters from the start of the
    annotation's own text, so no position metadata is needed unless an error is reported."""

    def __init__(self, ctx, text: str | None) -> None:
        self.ctx = ctx
        self.text = text  # None: every string at offset 0 (the places are wanted only for an error)
        self.cursor = 0

    def _offset_of(self, token: str) -> int:
        if self.text is None:
            return 0
        found = self.text.find(token, self.cursor)
        if found < 0:
            return 0
        self.cursor = found + len(token)
        return found

    def build(self, node: cst.BaseExpression, depth: int = 0):
        if depth > 32:
            return AOther("...")
        if isinstance(node, cst.Name) and node.value == "None":
            return ANone()
        if isinstance(node, (cst.Name, cst.Attribute)):
            name = dotted_name(node)
            return AName(name) if name is not None else AOther("")
        if isinstance(node, cst.Subscript):
            value = self.build(node.value, depth + 1)
            if type(value) is not AName:
                return AOther("")
            items = []
            for element in node.slice:
                if isinstance(element.slice, cst.Index):
                    items.append(self.build(element.slice.value, depth + 1))
                else:  # torchtyping's `"batch": 10` is a slice; its text is what the grammar reads
                    items.append(AOther(self.ctx.node_code(element.slice).strip()))
            return ASubscript(value, tuple(items))
        if isinstance(node, cst.SimpleString):
            literal = string_literal(node)
            start = self._offset_of(node.value)
            if literal is None:
                return AOther("")
            contents, offset = literal
            return AString(contents, start + offset)
        if isinstance(node, cst.FormattedString):
            text = self.ctx.node_code(node)
            start = self._offset_of(text)
            return AString(text[len(node.start): len(text) - len(node.end)], start + len(node.start))
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            options = []
            for side in (node.left, node.right):
                tree = self.build(side, depth + 1)
                options.extend(tree.options if type(tree) is AUnion else (tree,))
            return AUnion(tuple(options))
        if isinstance(node, (cst.Integer, cst.UnaryOperation)):
            return AOther(self.ctx.node_code(node).strip())  # torchtyping's TensorType[3, 4]
        return AOther("")


def annotation_text(node, ctx) -> str:
    """The code of an annotation as its position measures it (without its own parentheses)."""
    return ctx.bare_code(node)


def to_tree(node: cst.BaseExpression, ctx, offsets: bool = True):
    """Plain annotation tree of `node`; AString offsets are relative to `annotation_text(node)`.
    `offsets=False` leaves them 0 and spares generating the annotation's code."""
    return _TreeBuilder(ctx, annotation_text(node, ctx) if offsets else None).build(node)


def text_position(ctx, node, offset: int) -> tuple[int, int]:
    """(line, column) in the file of character `offset` of a node's annotation text."""
    line, column, _, _ = ctx.position(node)
    before = annotation_text(node, ctx)[:offset]
    newlines = before.count("\n")
    if newlines:
        return line + newlines, len(before) - before.rfind("\n")
    return line, column + len(before)


def _dims_from_parsed(parsed, sizes) -> tuple:
    dims = []
    for item in parsed.dims:
        if type(item) is Variadic:
            if item.name is not None and item.name in sizes:
                dims.append(Sym(item.name))  # a declared size for a variadic is its product
            else:
                dims.append(Sym("*" + item.name) if item.name else Sym("..."))
        else:
            dims.append(item.expr)
    return tuple(dims)


def facts_from_annotation(node: cst.BaseExpression, ctx) -> list[TensorFact] | None:
    """Candidate tensor facts of an annotation, or None if it is not a tensor annotation.
    A bad shape string is reported (Unparseable) at its exact column."""
    # Offsets place only an error: read the annotation without them, and again with them on an error
    # (the same tree but for the offsets, so the same error).
    result = interpret_annotation(to_tree(node, ctx, offsets=False), ctx.settings.aliases)
    if result.error is not None:
        result = interpret_annotation(to_tree(node, ctx), ctx.settings.aliases)
        offset = (result.error_string.start_offset if result.error_string is not None else 0) + (result.error.offset or 0)
        owner = ctx.settings.alias_strings.get(id(result.error_string))  # the bad string is in a module-level alias
        where = text_position(owner[0], owner[1], offset) if owner else text_position(ctx, node, offset)
        static = not isinstance(result.error, UnsupportedShape)
        ctx.report(Unparseable("shape annotation", result.error.message, static), where)
        return None
    if not result.candidates:
        return None
    facts = []
    for candidate in result.candidates:
        dtype = candidate.dtype.resolve(ctx.settings.default_dtype) if candidate.dtype is not None else None
        facts.append(TensorFact(_dims_from_parsed(candidate.shape, ctx.settings.sizes), dtype, ANNOTATION, _framework(candidate.array_type)))
    return facts


def _framework(array_type: str) -> str | None:
    last = array_type.rsplit(".", 1)[-1]
    if last == "Tensor" or array_type.startswith("torch"):
        return "torch"
    if array_type.startswith(("jax", "jnp")) or last == "Array":
        return "jax"
    if last == "ndarray" or array_type.startswith(("np", "numpy")):
        return "numpy"
    return None


def single_fact(facts: list[TensorFact] | None) -> TensorFact | None:
    """One fact for a value: several candidate ranks (a Union) keep only what they share."""
    if not facts:
        return None
    if len(facts) == 1:
        return facts[0]
    first = facts[0]
    if all(f == first for f in facts):
        return first
    dtype = first.dtype if all(f.dtype == first.dtype for f in facts) else None
    return TensorFact(None, dtype, ANNOTATION, first.framework)

