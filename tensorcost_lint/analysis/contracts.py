"""Declared shapes against inferred ones: an annotation or shape comment that provably disagrees
with what the code makes is reported as a Contradiction; the value keeps the more trusted shape."""

from __future__ import annotations

from shape_annotations import Const, ShapeError, Unknown, evaluate_dim, same_dim

from .facts import ANNOTATION, COMMENT, TensorFact
from .problems import Contradiction
from .shape_ops import has_group


def _pick_dim(declared, inferred, sizes):
    """Keep the declared dim unless only the inferred one has a known size."""
    if evaluate_dim_safe(declared, sizes) is None and evaluate_dim_safe(inferred, sizes) is not None:
        return inferred
    return declared


def evaluate_dim_safe(dim, sizes):
    try:
        return evaluate_dim(dim, sizes)
    except ShapeError:
        return None


def _example_size(dim) -> bool:
    """A literal size above 1 in a shape comment (`# [1024, 1024]`): the size in one example model,
    documentation rather than a contract, so it never contradicts configured dims. A literal 1 is
    structure (`# [B, 1, T]`) and stays."""
    return type(dim) is Const and dim.value > 1


def _documented(declared: TensorFact) -> TensorFact:
    """A comment's example sizes as unknown dims: its rank is still known."""
    if declared.origin != COMMENT or declared.shape is None or not any(_example_size(d) for d in declared.shape):
        return declared
    shape = tuple(Unknown("shape comment example") if _example_size(d) else d for d in declared.shape)
    return TensorFact(shape, declared.dtype, declared.origin, declared.framework)


def reconcile(ctx, inferred, declared: TensorFact, where, what: str, offset: int = 0):
    """Check a declared shape against the inferred one (reporting a Contradiction) and return the value's fact.
    A shape comment's literal sizes are checked only against literal inferred sizes."""
    if type(inferred) is not TensorFact or inferred.shape is None:
        declared = _documented(declared)
        if type(inferred) is TensorFact and declared.dtype is None:
            return TensorFact(declared.shape, inferred.dtype, declared.origin, inferred.framework or declared.framework)
        return declared
    sizes = ctx.settings.sizes
    if declared.shape is None:
        return inferred if declared.dtype is None else inferred.with_dtype(declared.dtype)
    if len(declared.shape) != len(inferred.shape) and not _has_group(declared.shape, inferred.shape):
        ctx.report(Contradiction(what, declared.shape, inferred.shape), where, offset)
        return declared if declared.origin == ANNOTATION else inferred
    if _has_group(declared.shape, inferred.shape):
        return declared if declared.origin == ANNOTATION else inferred
    dims = []
    for index, (d, i) in enumerate(zip(declared.shape, inferred.shape)):
        if declared.origin == COMMENT and _example_size(d) and type(i) is not Const:
            dims.append(i)  # an example size says nothing about a dim the code derives from config
            continue
        verdict = same_dim(d, i, sizes)
        if verdict is False:
            ctx.report(Contradiction(what, declared.shape, inferred.shape, index), where, offset)
            return declared if declared.origin == ANNOTATION else inferred
        dims.append(d if verdict else _pick_dim(d, i, sizes))
    dtype = declared.dtype or inferred.dtype
    if declared.dtype and inferred.dtype and declared.dtype != inferred.dtype and declared.origin == ANNOTATION:
        ctx.report(Contradiction(what, declared.shape, inferred.shape, None, declared.dtype, inferred.dtype),
                        where, offset)
    return TensorFact(tuple(dims), dtype, declared.origin, inferred.framework or declared.framework)


def _has_group(*shapes) -> bool:
    return any(has_group(s) for s in shapes)
