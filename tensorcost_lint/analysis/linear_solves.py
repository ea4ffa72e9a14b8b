"""Linear systems solved by torch.linalg, as chunked linear-attention kernels use them (a triangular
system per chunk, solved against the chunk's values): `torch.linalg.solve_triangular(A, B)`. Each
takes (interp, CallArgs); checked against torch's OpInfo samples in tests/conformance.

FlopCounterMode has no formula for a solve, so it records no site (0 FLOPs), as for the other ops
these tables transfer; only the result's shape and dtype flow on."""

from __future__ import annotations

from . import shape_ops
from .facts import TensorFact

_MATRIX = 2  # the last two dims are the matrix; the dims before them are a batch


def _solve_triangular(interp, args):
    """`solve_triangular(A, B, *, upper, left=True, unitriangular=False)`: A is (*, n, n) and B is
    (*, n, k) when left (AX = B), (*, k, k) and (*, n, k) when not (XA = B); either way X has B's
    matrix dims after the broadcast batch. torch refuses operands of different dtypes."""
    a_node, b_node = args.get(0, "input"), args.get(1, "B")
    facts = [interp.eval(node) if node is not None else None for node in (a_node, b_node)]
    for value in [*args.positional[2:], *(v for k, v in args.keywords.items() if k not in ("input", "B"))]:
        interp.eval(value)
    if args.starred or not all(type(fact) is TensorFact for fact in facts):
        return None
    a, b = facts
    dtype = a.dtype if a.dtype == b.dtype else None
    result = TensorFact(None, dtype, framework=a.framework or b.framework)
    if a.shape is None or b.shape is None or shape_ops.has_group(a.shape) or shape_ops.has_group(b.shape) \
            or len(a.shape) < _MATRIX or len(b.shape) < _MATRIX:
        return result
    batch = shape_ops.broadcast(a.shape[:-_MATRIX], b.shape[:-_MATRIX], interp.ctx.settings.sizes)
    return result if batch is None else result.with_shape((*batch, *b.shape[-_MATRIX:]))

