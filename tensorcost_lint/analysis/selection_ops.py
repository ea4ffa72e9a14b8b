"""Tensor methods that keep the receiver's shape while writing into it (scatter, index_add), sort
it (sort, argsort, cummax) or pick along a dim (topk, kthvalue, median, mode), and ternary
elementwise ops (lerp, addcmul). Checked against torch's OpInfo samples in tests/conformance."""

from __future__ import annotations

import libcst as cst

from shape_annotations import Const

from . import dtype_rules, shape_ops
from .arguments import CallArgs
from .literals import int_value
from .facts import VALUES_AND_INDICES, SequenceFact, TensorFact, elementwise
from .pointwise_ops import binary, reduction, same, unary


def _with_indices(values):
    """torch's (values, indices) named tuple, indices int64; torch-only (numpy has no such return)."""
    if type(values) is not TensorFact or values.framework != "torch":
        return None
    return SequenceFact((values, values.with_dtype("int64")), VALUES_AND_INDICES)


def _sorted_pair(interp, receiver, args):
    """`x.sort(dim)`, `x.cummax(dim)`: values and indices of the receiver's shape."""
    return _with_indices(same(interp, receiver, args))


def _argsort(interp, receiver, args):
    return same(interp, receiver, args).with_dtype("int64")


def _trace(interp, receiver, args):
    """The sum of a matrix's diagonal: 0-d, accumulated as sums are (ints as int64)."""
    result = receiver.with_shape(None if receiver.shape is None or len(receiver.shape) != 2 else ())
    return result.with_dtype(dtype_rules.accumulated(receiver.dtype, receiver.framework))


def _picked(dim_position: int, default_dim):
    """median/nanmedian/mode/kthvalue along `dim` (with `keepdim` after it): values and indices;
    median with no dim is the 0-d median alone."""

    def transfer(interp, receiver, args):
        if default_dim is None and not args.positional and "dim" not in args.keywords:
            return receiver.with_shape(())
        for value in args.positional[:dim_position]:
            interp.eval(value)
        rest = CallArgs(args.positional[dim_position:], {k: v for k, v in args.keywords.items() if k != "k"},
                        args.starred)
        if not rest.positional and "dim" not in rest.keywords:  # the default dim, written out
            rest = CallArgs([], {**rest.keywords, "dim": cst.parse_expression(str(default_dim))}, args.starred)
        return _with_indices(reduction(dtype_rules.same)(interp, receiver, rest))

    return transfer


def _topk(interp, receiver, args):
    """`x.topk(k, dim=-1)`: that dim becomes k long, with indices."""
    k_node, dim_node = args.get(0, "k"), args.get(1, "dim")
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)
    k = int_value(k_node) if k_node is not None else None
    # `topk(probs, self.top_k)`: k is any size the code knows (a dim), not only a literal
    k_dim = (Const(k) if k >= 0 else None) if k is not None else \
        interp.dim_of(k_node) if k_node is not None else None
    dim = -1 if dim_node is None else int_value(dim_node)
    shape = receiver.shape
    position = None if shape is None or dim is None or k_dim is None else shape_ops.axis(dim, len(shape))
    if shape is not None and not shape:
        position = None  # a 0-d input has no dim to pick along
    if position is None:
        return _with_indices(receiver.with_shape(None))
    return _with_indices(receiver.with_shape(tuple(shape[:position]) + (k_dim,) + tuple(shape[position + 1:])))


def _ternary(first: str, second: str):
    """`x.lerp(end, weight)`, `x.addcmul(t1, t2, value=)`: all three broadcast together."""

    def transfer(interp, receiver, args):
        a, b = interp.eval(args.get(0, first)), interp.eval(args.get(1, second))
        for name, value in args.keywords.items():
            if name not in (first, second):
                interp.eval(value)
        for value in args.positional[2:]:
            interp.eval(value)
        result = elementwise(elementwise(receiver, a, interp.ctx.settings.sizes), b, interp.ctx.settings.sizes)
        return result if type(result) is TensorFact else receiver.with_shape(None).with_dtype(None)

    return transfer


# (scatter, clamp_min, clamp_max, sort, topk and bernoulli have entries in op_table.OPS, with their rules)
_WRITES = ("index_fill", "index_copy", "index_add", "scatter_add", "scatter_reduce", "index_put", "put",
           "diagonal_scatter", "select_scatter", "slice_scatter", "renorm", "msort", "conj", "conj_physical",
           "resolve_conj", "resolve_neg")
METHODS = {
    **{name: same for name in (*_WRITES, *(f"{n}_" for n in _WRITES[:7]), "renorm_", "conj_physical_",
                               "clamp_min_", "clamp_max_", "lerp_", "addcmul_", "addcdiv_")},
    "logcumsumexp": unary(dtype_rules.float_result),
    "isclose": binary(lambda dtype, framework: "bool"),
    "cummax": _sorted_pair, "cummin": _sorted_pair, "argsort": _argsort, "trace": _trace,
    "median": _picked(0, None), "nanmedian": _picked(0, None), "mode": _picked(0, -1), "kthvalue": _picked(1, -1),
    "lerp": _ternary("end", "weight"), "addcmul": _ternary("tensor1", "tensor2"),
    "addcdiv": _ternary("tensor1", "tensor2"),
}
# torch.NAME(input, ...) is input.NAME(...) for these
TORCH_FUNCTIONS = tuple(name for name in METHODS if not name.endswith("_"))
