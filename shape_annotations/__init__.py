"""Shape annotations and symbolic dimensions: how tensorcost reads shapes without running code.

Standard library only (plus the sibling `estimator` package): no LibCST, no YAML, nothing from
tensorcost_lint. Never evaluates annotation text. Every parser is bounded (4 KiB of text,
expression depth 32, 64 dims) and refuses with a ShapeError that carries a 0-based offset.

    jaxtyping shape strings      parse_shape_string, render_shape, DTYPE_CLASSES, dtype_spec_for_class
    annotation expressions       interpret_annotation over AName / ASubscript / AString / ... records
    shape comments, pragmas      parse_shape_comment, parse_pragma, merge_dim_bindings
    einops patterns              parse_einops_pattern, rearrange_shape, repeat_shape, reduce_shape
    dimensions and counts        Sym / Const / BinOp / Unknown, same_dim, evaluate_dim, Polynomial
"""

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
from .annotation_trees import interpret_annotation
from .bindings import merge_dim_bindings, validate_size
from .dims import (
    BinOp,
    Const,
    DimExpr,
    Sym,
    Unknown,
    add_dims,
    contains_unknown,
    dim_depth,
    dim_from_int,
    evaluate_dim,
    evaluate_integer,
    floordiv_dims,
    free_names,
    mul_dims,
    parse_dim_expr,
    render_dim,
    same_dim,
    simplify_dim,
    sub_dims,
)
from .dtype_classes import DTYPE_CLASSES, DTypeSpec, dtype_spec_for_class, is_array_type
from .einops_grammar import ELLIPSIS, AxisItem, AxisList, EinopsPattern, parse_einops_pattern
from .einops_patterns import einops_einsum_axes, rearrange_shape, reduce_shape, repeat_shape
from .errors import ShapeError, UnsupportedShape
from .jaxtyping_shapes import ParsedShape, ShapeDim, Variadic, parse_shape_string, render_shape
from .limits import MAX_DEPTH, MAX_DIMS, MAX_SIZE, MAX_TEXT_CHARS
from .polynomial import Polynomial
from .pragmas import parse_pragma
from .shape_comments import CommentShape, parse_shape_comment

__all__ = [name for name in dir() if not name.startswith("_")]
