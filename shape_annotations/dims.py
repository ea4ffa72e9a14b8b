"""Dimension expressions: one import for the records, the parser, evaluation and algebra.

Split by concern underneath (dim_records, dim_parser, dim_evaluation, dim_algebra); callers use
this module.
"""

from __future__ import annotations

from .dim_algebra import add_dims, floordiv_dims, mul_dims, same_dim, simplify_dim, sub_dims
from .dim_evaluation import evaluate_dim, evaluate_integer
from .dim_parser import parse_dim_expr
from .dim_records import (
    BinOp,
    Const,
    DimExpr,
    Sym,
    Unknown,
    contains_unknown,
    dim_depth,
    dim_from_int,
    free_names,
    render_dim,
)

__all__ = [
    "BinOp",
    "Const",
    "DimExpr",
    "Sym",
    "Unknown",
    "add_dims",
    "contains_unknown",
    "dim_depth",
    "dim_from_int",
    "evaluate_dim",
    "evaluate_integer",
    "floordiv_dims",
    "free_names",
    "mul_dims",
    "parse_dim_expr",
    "render_dim",
    "same_dim",
    "simplify_dim",
    "sub_dims",
]
