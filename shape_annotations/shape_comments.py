"""Shape comments on assignments, the nanoGPT / TransformerLens convention.

    q = q.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
    resid = ...                               # [batch, pos, d_model]
    x = self.proj(x)                          # shape: (B, T, 3C)
    y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)   (target: after the arrow)
    tok_emb = self.wte(idx)                   # token embeddings of shape (b, t, n_embd)

Comments are prose far more often than shapes, so reading is conservative: without a `shape`
keyword a comment must be *entirely* a shape of at least two dims (or `(B,)`), optionally with
operands and an arrow. `# see (1)`, `# TODO(x)`, `# compute attention (fast path)` are None.
Only a comment that starts with `shape:` and then fails to parse is an error (TCL001): there the
author clearly meant a shape. `3C` in a comment means `3*C`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dim_parser import parse_dim_expr
from .dim_records import Const, DimExpr, Unknown
from .errors import ShapeError
from .limits import MAX_DIMS, check_text_size

_OPEN = {"(": ")", "[": "]"}
_ARROWS = ("->", "\u2192", "=>")
_OPERAND_SEPARATORS = ("x", "\u00d7", "@", "*", ",")
_SHAPE_WORDS = ("shape", "shaped", "shape:", "shape=", "shape is", "shapes")


@dataclass(frozen=True, slots=True)
class CommentShape:
    """The target shape of a shape comment; offset is its opening bracket inside the comment.
    operands: the shapes left of `->` in the arrow form (empty otherwise)."""

    dims: tuple[DimExpr, ...]
    offset: int
    operands: tuple[tuple[DimExpr, ...], ...] = ()


class _NotAShape(Exception):
    """This comment is prose (or not a form we read): the caller returns None."""


def parse_shape_comment(comment: str) -> CommentShape | None:
    check_text_size(comment, "comment")
    i = _skip_space(comment, 0)
    if comment.startswith("#", i):
        i = _skip_space(comment, i + 1)
    strict = comment[i:i + 6].lower() == "shape:"
    if strict:
        i = _skip_space(comment, i + 6)
        if i >= len(comment) or comment[i] not in _OPEN:
            raise ShapeError("expected a shape such as (B, T, C) after 'shape:'", i, 1)
        keyword = True
    else:
        bracket = _first_bracket(comment, i)
        if bracket is None:
            return None
        prose = comment[i:bracket].strip().lower()
        keyword = bool(prose) and _ends_with_shape_word(prose)
        if prose and not keyword:
            return None
        i = bracket
    try:
        return _parse_body(comment, i, strict=strict, keyword=keyword)
    except _NotAShape:
        return None
    except ShapeError:
        if strict:
            raise
        return None


def _ends_with_shape_word(prose: str) -> bool:
    for word in _SHAPE_WORDS:
        if prose.endswith(word):
            before = prose[: len(prose) - len(word)]
            if not before or before[-1].isspace():
                return True
    return False


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _first_bracket(text: str, i: int) -> int | None:
    for j in range(i, len(text)):
        if text[j] in _OPEN:
            return j
    return None


def _parse_body(comment: str, i: int, *, strict: bool, keyword: bool) -> CommentShape:
    shapes: list[tuple[tuple[DimExpr, ...], int, bool]] = []  # dims, offset, explicit 1-tuple
    arrow_at: int | None = None
    while True:
        dims, end, one_tuple = _parse_tuple(comment, i, strict)
        shapes.append((dims, i, one_tuple))
        j = _skip_space(comment, end)
        if j >= len(comment):
            break
        arrow = next((a for a in _ARROWS if comment.startswith(a, j)), None)
        if arrow is not None:
            arrow_at = len(shapes)
            i = _skip_space(comment, j + len(arrow))
        else:
            sep = next((s for s in _OPERAND_SEPARATORS if comment.startswith(s, j)), None)
            k = _skip_space(comment, j + len(sep)) if sep else j
            if sep is None and comment[j] in _OPEN:
                if strict:
                    raise ShapeError("several shapes without '->': which one is the target?", j, 1)
                raise _NotAShape
            if sep is None or k >= len(comment) or comment[k] not in _OPEN:
                _trailing(comment, j, end, keyword)
                break
            i = k
        if i >= len(comment) or comment[i] not in _OPEN:
            if strict:
                raise ShapeError("expected a shape after the arrow or operator", i, 1)
            raise _NotAShape
    if len(shapes) > 1 and arrow_at is None:
        if strict:
            raise ShapeError("several shapes without '->': which one is the target?", shapes[1][1], 1)
        raise _NotAShape
    target, offset, one_tuple = shapes[-1]
    if not keyword and arrow_at is None and len(target) < 2 and not one_tuple:
        raise _NotAShape  # `# (1)`, `# [x]`: too easily prose or a citation
    operands = tuple(s[0] for s in shapes[:-1])
    return CommentShape(target, offset, operands)


def _trailing(comment: str, j: int, end: int, keyword: bool) -> None:
    """Text after the last shape: only punctuation, unless a `shape` keyword vouched for it."""
    rest = comment[j:].strip()
    if all(ch in ".;:!" for ch in rest) or rest.startswith("#"):  # `# (B, T)  # noqa: E501`
        return
    if keyword and j > end:  # `# shape: (B, T, C)  after attention`
        return
    raise _NotAShape


def _parse_tuple(comment: str, start: int, strict: bool) -> tuple[tuple[DimExpr, ...], int, bool]:
    close = _OPEN[comment[start]]
    depth, i, piece_start = 0, start + 1, start + 1
    pieces: list[tuple[str, int]] = []
    while True:
        if i >= len(comment):
            if strict:
                raise ShapeError(f"unclosed {comment[start]!r}", start, 1)
            raise _NotAShape
        ch = comment[i]
        if ch == "(":
            depth += 1
        elif ch == ")" and depth > 0:
            depth -= 1
        elif depth == 0 and (ch == close or ch == ","):
            pieces.append((comment[piece_start:i], piece_start))
            piece_start = i + 1
            if ch == close:
                break
        elif ch in "[]()":
            if strict:
                raise ShapeError(f"unbalanced {ch!r} in shape", i, 1)
            raise _NotAShape
        i += 1
    one_tuple = len(pieces) == 2 and not pieces[1][0].strip()
    if pieces and not pieces[-1][0].strip() and len(pieces) > 1:
        pieces.pop()  # trailing comma: `(B,)`
    if len(pieces) == 1 and not pieces[0][0].strip():
        pieces = []  # `()`: a scalar
    if len(pieces) > MAX_DIMS:
        raise ShapeError(f"more than {MAX_DIMS} dims; refused", start, i - start + 1)
    dims = tuple(_dim(text, at, strict) for text, at in pieces)
    return dims, i + 1, one_tuple


def _dim(text: str, at: int, strict: bool) -> DimExpr:
    stripped = text.strip()
    lead = at + (len(text) - len(text.lstrip()))
    if not stripped:
        if strict:
            raise ShapeError("empty dimension", at, 1)
        raise _NotAShape
    if stripped.startswith("*") or "..." in stripped:
        raise _NotAShape  # variadic dims cannot be written as a fixed tuple; not an error either
    try:
        dim = parse_dim_expr(stripped, implicit_mul=True, allow_unknown=True)
    except ShapeError as err:
        raise err.shifted(lead) from None
    if type(dim) is Const and dim.value <= 0:
        # `# (batch, -1)` reads like view's "inferred" size: no size at all, never a dim of -1
        if strict:
            raise ShapeError(f"a dimension size must be positive, got {stripped}", lead, len(stripped))
        return Unknown(stripped)
    return dim
