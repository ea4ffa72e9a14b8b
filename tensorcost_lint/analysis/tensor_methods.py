"""Shape transfer of tensor methods: `x.transpose(1, 2)`, `x.view(B, T, nh, -1)`, `x.split(n, 2)`...

Each function takes (interp, receiver fact, CallArgs) and returns the result fact; arguments
are always evaluated so nested call sites are recorded.
The table that names them is op_table.OPS (an entry's `shape`); op_table.METHODS is read from it.
"""

from __future__ import annotations

import libcst as cst

from . import shape_ops
from .arguments import CallArgs, dim_args, literal_axes
from .literals import int_value
from .facts import DimFact, DTypeFact, ScalarFact, SequenceFact, TensorFact

_DTYPE_METHODS = {
    "float": "float32", "half": "float16", "bfloat16": "bfloat16", "double": "float64",
    "int": "int32", "long": "int64", "short": "int16", "bool": "bool", "char": "int8", "byte": "uint8",
}
# complex conversions: not in _DTYPE_METHODS, which names methods every framework's arrays share
_COMPLEX_METHODS = {"cfloat": "complex64", "cdouble": "complex128"}


def _eval_all(interp, args) -> None:
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)


def _same(interp, receiver, args):
    _eval_all(interp, args)
    return receiver.with_shape(receiver.shape)


def _transpose(interp, receiver, args):
    if receiver.framework in ("numpy", "jax"):
        return _numpy_transpose(interp, receiver, args)  # numpy/jax: a full permutation
    axes = literal_axes(args, interp=interp)
    _eval_all(interp, args)
    if receiver.shape is None or axes is None or len(axes) != 2:
        return receiver.with_shape(None)
    return receiver.with_shape(shape_ops.transpose(receiver.shape, *axes))


def _t(interp, receiver, args):
    if receiver.shape is None or len(receiver.shape) > 2:
        return receiver.with_shape(None)
    return receiver.with_shape(tuple(reversed(receiver.shape)))


def _permute(interp, receiver, args):
    axes = literal_axes(args, interp=interp)
    _eval_all(interp, args)
    if receiver.shape is None or axes is None:
        return receiver.with_shape(None)
    return receiver.with_shape(shape_ops.permute(receiver.shape, axes))


def _numpy_transpose(interp, receiver, args):
    if not args.positional:
        return receiver.with_shape(None if receiver.shape is None else shape_ops.reverse(receiver.shape))
    return _permute(interp, receiver, args)


def _view(interp, receiver, args):
    if len(args.positional) == 1:
        target = interp.eval(args.positional[0]) if not _is_literal_dims(args.positional[0]) else None
        if type(target) is DTypeFact:
            return receiver.with_dtype(target.dtype).with_shape(None)  # a bit-cast view
    dims = dim_args(interp, args)
    if dims is None:
        return receiver.with_shape(None)
    return receiver.with_shape(shape_ops.reshape(receiver.shape, dims, interp.ctx.settings.sizes))


def _is_literal_dims(node) -> bool:
    return isinstance(node, (cst.Tuple, cst.List, cst.Integer, cst.UnaryOperation))


def _like(interp, receiver, args):
    other = interp.eval(args.get(0))
    if type(other) is TensorFact:
        return receiver.with_shape(other.shape)
    return receiver.with_shape(None)


def _unsqueeze(interp, receiver, args):
    axes = literal_axes(args, interp=interp)  # `cos.unsqueeze(unsqueeze_dim)` with the parameter known
    if receiver.shape is None or not axes:
        return receiver.with_shape(None)
    return receiver.with_shape(shape_ops.unsqueeze(receiver.shape, axes[0]))


def _squeeze(interp, receiver, args):
    if receiver.shape is None:
        return receiver
    if not args.positional and "dim" not in args.keywords:
        return receiver.with_shape(shape_ops.squeeze(receiver.shape))
    index = int_value(args.get(0, "dim"))
    return receiver.with_shape(None if index is None else shape_ops.squeeze(receiver.shape, index))


def _expand(interp, receiver, args):
    dims = dim_args(interp, args)
    if dims is None:
        return receiver.with_shape(None)
    return receiver.with_shape(shape_ops.expand(receiver.shape, dims))


def _broadcast_to(interp, receiver, args):
    dims = dim_args(interp, args)
    return receiver.with_shape(None if dims is None or None in dims else tuple(dims))


def _repeat(interp, receiver, args):
    dims = dim_args(interp, args)
    if dims is None or None in dims:
        return receiver.with_shape(None)
    return receiver.with_shape(shape_ops.repeat(receiver.shape, dims))


def _repeat_interleave(interp, receiver, args):
    """`x.repeat_interleave(r, dim=d)`: dim d r times longer; with no dim, the flattened tensor r
    times longer. A tensor of per-element repeats gives a length only its values know: unknown."""
    repeats_node, dim_node = args.get(0, "repeats"), args.get(1, "dim")
    repeats = interp.eval(repeats_node) if repeats_node is not None else None
    for name, value in args.keywords.items():
        if name not in ("repeats", "dim"):
            interp.eval(value)
    dim = None if dim_node is None else int_value(dim_node)
    if receiver.shape is None or type(repeats) is not DimFact or (dim_node is not None and dim is None):
        return receiver.with_shape(None)
    if dim is None:
        return receiver.with_shape((shape_ops.mul_dims(shape_ops.product(receiver.shape), repeats.dim),))
    axis = shape_ops.axis(dim, len(receiver.shape))
    if axis is None:
        return receiver.with_shape(None)
    shape = list(receiver.shape)
    shape[axis] = shape_ops.mul_dims(shape[axis], repeats.dim)
    return receiver.with_shape(tuple(shape))


def _split(interp, receiver, args):
    size_node, dim_node = args.get(0, "split_size_or_sections") or args.get(0, "split_size"), args.get(1, "dim")
    dim = 0 if dim_node is None else int_value(dim_node)
    if receiver.shape is None or size_node is None or dim is None:
        _eval_all(interp, args)
        return None
    sections = dim_args(interp, CallArgs([size_node], {}, False))
    if sections is None or None in sections:
        return None
    pieces = shape_ops.split_sizes(
        receiver.shape, list(sections) if isinstance(size_node, (cst.List, cst.Tuple)) else sections[0],
        dim, interp.ctx.settings.sizes)
    if pieces is None:
        return None
    return SequenceFact(tuple(receiver.with_shape(p) for p in pieces))


def _chunk(interp, receiver, args):
    chunks, dim = int_value(args.get(0, "chunks")), args.get(1, "dim")
    dim = 0 if dim is None else int_value(dim)
    if receiver.shape is None or chunks is None or dim is None:
        return None
    pieces = shape_ops.chunk(receiver.shape, chunks, dim)
    return None if pieces is None else SequenceFact(tuple(receiver.with_shape(p) for p in pieces))


def _unbind(interp, receiver, args):
    """`qkv.unbind(0)` (timm's attention): one tensor per index of a dim of literal size."""
    dim_node = args.get(0, "dim")
    dim = 0 if dim_node is None else int_value(dim_node)
    if receiver.shape is None or dim is None:
        return None
    pieces = shape_ops.unbind(receiver.shape, dim)
    return None if pieces is None else SequenceFact(tuple(receiver.with_shape(p) for p in pieces))


def size(interp, receiver, args):
    shape = receiver.shape
    if shape is None or shape_ops.has_group(shape):
        return None
    index_node = args.get(0, "dim")
    if index_node is None:
        return SequenceFact(tuple(DimFact(d) for d in shape))
    index = int_value(index_node)
    position = None if index is None else shape_ops.axis(index, len(shape))
    return None if position is None else DimFact(shape[position])


def _to(interp, receiver, args):
    for value in [*args.positional, *args.keywords.values()]:
        fact = interp.eval(value)
        if type(fact) is DTypeFact:
            receiver = receiver.with_dtype(fact.dtype)
        elif type(fact) is TensorFact and value is args.get(0):
            receiver = receiver.with_dtype(fact.dtype)
    return receiver.with_shape(receiver.shape)


def _dtype_method(name: str):
    def convert(interp, receiver, args):
        _eval_all(interp, args)
        return receiver.with_dtype({**_DTYPE_METHODS, **_COMPLEX_METHODS}[name]).with_shape(receiver.shape)

    return convert


def _type(interp, receiver, args):
    if not args.positional and "dtype" not in args.keywords:
        return None  # `x.type()` returns a string
    return _to(interp, receiver, args)


def _type_as(interp, receiver, args):
    other = interp.eval(args.get(0))
    dtype = other.dtype if type(other) is TensorFact else None
    return receiver.with_dtype(dtype).with_shape(receiver.shape)


def _flatten(interp, receiver, args):
    start, end = args.get(0, "start_dim"), args.get(1, "end_dim")
    start = 0 if start is None else int_value(start)
    end = -1 if end is None else int_value(end)
    if start is None or end is None:
        return receiver.with_shape(None)
    return receiver.with_shape(shape_ops.flattened(receiver.shape, start, end))


def _new_tensor(fill: bool):
    """`x.new_ones(size, dtype=...)`, `x.new_zeros(...)`, `x.new_empty(...)`, `x.new_full(size,
    value)`: the given size, the receiver's dtype unless `dtype` says otherwise."""

    def transfer(interp, receiver, args):
        size_nodes = args.positional[:1] if fill else args.positional
        if "size" in args.keywords:
            size_nodes = [args.keywords["size"]]
        dims = dim_args(interp, CallArgs(list(size_nodes), {}, args.starred, args.stars), empty=True)
        dtype = receiver.dtype
        for name, value in args.keywords.items():
            fact = interp.eval(value) if name != "size" else None
            if name == "dtype":
                dtype = fact.dtype if type(fact) is DTypeFact else None
        for value in args.positional[len(size_nodes):]:
            interp.eval(value)
        shape = None if dims is None or None in dims else tuple(dims)
        return TensorFact(shape, dtype, framework=receiver.framework)

    return transfer


def _dim_count(interp, receiver, args):
    return ScalarFact()


def _rank(interp, receiver, args):
    """`x.dim()`: the number of dims, known with the shape."""
    if receiver.shape is None or args.positional or args.keywords:
        return ScalarFact()
    return DimFact(shape_ops.Const(len(receiver.shape)))


def _numel(interp, receiver, args):
    """`x.numel()`: the product of the sizes (`keys.numel() == 0` asks whether a cache is empty)."""
    if receiver.shape is None or args.positional or args.keywords or None in receiver.shape:
        return ScalarFact()
    return DimFact(shape_ops.product(receiver.shape))
