"""Elementwise, reduction and small shape ops of tensors, as rule factories that groups of ops
share: unary maths (a dtype rule each: float ops make integers float), binary ops that broadcast
(comparisons give bool), reductions over `dim` with `keepdim`, flips and rotations. Each rule is a
Tensor method's `(interp, receiver, CallArgs)`; the op table (op_table_maths.py, op_table_layout.py)
names the ops that read them. Checked against torch's OpInfo samples in tests/conformance.
"""

from __future__ import annotations

import libcst as cst

from shape_annotations import Const

from . import dtype_rules, shape_ops
from .arguments import CallArgs, literal_axes
from .literals import int_value
from .facts import VALUES_AND_INDICES, DTypeFact, SequenceFact, TensorFact, elementwise


def _eval_all(interp, args) -> None:
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)


def same(interp, receiver, args):
    """Shape and dtype of the receiver: in-place ops (their result is the receiver), flips, rolls."""
    _eval_all(interp, args)
    return receiver.with_shape(receiver.shape)


def call_dtype(interp, args, position=None):
    """The `dtype` a call passes by keyword (or at `position`): (its node, its dtype or None)."""
    node = args.keywords.get("dtype")
    if node is None and position is not None and len(args.positional) > position:
        node = args.positional[position]
    if node is None:
        return None, None
    fact = interp.eval(node)
    return node, fact.dtype if type(fact) is DTypeFact else None


def unary(rule, dtype_position=None):
    """An op that keeps the receiver's shape; its dtype is `rule` of the receiver's (a float op
    makes integers float), or the `dtype` the call passes (softmax, cumsum: at `dtype_position`)."""

    def transfer(interp, receiver, args):
        node, dtype = call_dtype(interp, args, dtype_position) if dtype_position is not None else (None, None)
        for value in [*args.positional, *args.keywords.values()]:
            if value is not node:
                interp.eval(value)
        result = receiver.with_shape(receiver.shape)
        return result.with_dtype(dtype if node is not None else rule(receiver.dtype, receiver.framework))

    return transfer


def _elementwise_method(interp, receiver, args):
    other_node = args.get(0, "other") or args.keywords.get("exponent")
    other = interp.eval(other_node) if other_node is not None else None
    for value in [*args.positional, *args.keywords.values()]:
        if value is not other_node:
            interp.eval(value)
    if other_node is None:
        return receiver.with_shape(None)  # an operand we did not find: its broadcast is unknown
    return elementwise(receiver, other, interp.ctx.settings.sizes)


def division(interp, receiver, args):
    """`x.div(y)`, `x.true_divide(y)`: true division makes integers float, unless a rounding mode
    (trunc, floor) keeps them integers."""
    result = _elementwise_method(interp, receiver, args)
    if type(result) is not TensorFact:
        return result
    rounding = args.keywords.get("rounding_mode")
    if rounding is None or (isinstance(rounding, cst.Name) and rounding.value == "None"):
        return result.with_dtype(dtype_rules.float_result(result.dtype, result.framework))
    return result


def float_power(interp, receiver, args):
    result = _elementwise_method(interp, receiver, args)
    if type(result) is not TensorFact:
        return result
    return result.with_dtype(dtype_rules.double_result(receiver.dtype, receiver.framework))


def where_method(interp, receiver, args):
    """`x.where(condition, y)`: x, the condition and y broadcast together; x's dtype if y's is it."""
    condition, other = interp.eval(args.get(0, "condition")), interp.eval(args.get(1, "other"))
    sizes = interp.ctx.settings.sizes
    result = elementwise(receiver, other, sizes)
    if type(condition) is not TensorFact or type(result) is not TensorFact:
        return receiver.with_shape(None).with_dtype(None)
    return result.with_shape(shape_ops.broadcast(condition.shape, result.shape, sizes))


def masked_scatter(interp, receiver, args):
    """`x.masked_scatter(mask, source)`: x broadcast with the mask, in x's dtype."""
    mask = interp.eval(args.get(0, "mask"))
    interp.eval(args.get(1, "source"))
    if type(mask) is not TensorFact:
        return receiver.with_shape(None)
    return receiver.with_shape(shape_ops.broadcast(receiver.shape, mask.shape, interp.ctx.settings.sizes))


def _bool_literal(node):
    """True or False for a literal `True`/`False`, None for anything else."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def reduction(rule, dim_position=0, keepdim_position=1, dtype_keyword=False):
    """sum/mean/amax...: over `dim` (all dims when absent), keeping them as 1 with `keepdim`; the
    dtype is `rule` of the receiver's (sum of ints is int64, any is bool) or the `dtype` passed.
    torch.norm puts `p` first (dim at 1, keepdim at 2); std/var `unbiased` (keepdim at 2)."""

    def transfer(interp, receiver, args):
        dim_node = args.get(dim_position, "dim")
        if dim_node is None:
            dim_node = args.keywords.get("axis")
        keepdim_node = args.get(keepdim_position, "keepdim") or args.keywords.get("keepdims")
        dtype_node, dtype = call_dtype(interp, args) if dtype_keyword else (None, None)
        _eval_all(interp, CallArgs([v for v in args.positional if v is not dtype_node],
                                   {k: v for k, v in args.keywords.items() if v is not dtype_node}, False))
        result_dtype = dtype if dtype_node is not None else rule(receiver.dtype, receiver.framework)
        keepdim = False if keepdim_node is None else _bool_literal(keepdim_node)
        result = receiver.with_dtype(result_dtype)
        if receiver.shape is None or keepdim is None or len(args.positional) > max(dim_position, keepdim_position) + 1:
            return result.with_shape(None)
        if dim_node is None or (isinstance(dim_node, cst.Name) and dim_node.value == "None"):
            return result.with_shape(shape_ops.reduce(receiver.shape, None, keepdim))
        axes = literal_axes(CallArgs([dim_node], {}, False), interp=interp)  # `dim=dim` passed down
        if not axes:  # an empty dim list reduces everything for sum but nothing for any: unknown
            return result.with_shape(None)
        return result.with_shape(shape_ops.reduce(receiver.shape, axes, keepdim))

    return transfer


def _to_bool(dtype, framework=None):
    return "bool"


def _to_int64(dtype, framework=None):
    return "int64"


def _angle(dtype, framework=None):
    return dtype_rules.real_result(dtype_rules.float_result(dtype, framework), framework)


def binary(rule):
    """A broadcasting op whose dtype is `rule` of the operands' common one (bool for comparisons)."""

    def transfer(interp, receiver, args):
        result = _elementwise_method(interp, receiver, args)
        if type(result) is not TensorFact:
            return result
        return result.with_dtype(rule(result.dtype, result.framework))

    return transfer


def _extreme(interp, receiver, args):
    """`x.max()`: the largest element; `x.max(other)`: elementwise; `x.max(dim, keepdim)`:
    (values, indices) as torch's named tuple."""
    if not args.positional and not args.keywords:
        return receiver.with_shape(())
    first = args.get(0, "dim")
    if "other" in args.keywords or (first is not None and int_value(first) is None):
        return _elementwise_method(interp, receiver, args)
    values = reduction(dtype_rules.same)(interp, receiver, args)
    if receiver.framework in ("numpy", "jax"):
        return values  # numpy's and jax's max over an axis is the values alone
    if receiver.framework != "torch":
        return None
    return SequenceFact((values, values.with_dtype("int64")), VALUES_AND_INDICES)


def _rot90(interp, receiver, args):
    k_node, dims_node = args.get(0, "k"), args.get(1, "dims")
    _eval_all(interp, args)
    k = 1 if k_node is None else int_value(k_node)
    axes = [0, 1] if dims_node is None else literal_axes(CallArgs([dims_node], {}, False))
    if receiver.shape is None or k is None or axes is None or len(axes) != 2:
        return receiver.with_shape(None)
    return receiver.with_shape(receiver.shape if k % 2 == 0 else shape_ops.transpose(receiver.shape, *axes))


def _dim_replaced(receiver, dim_node, replacement):
    """The receiver's shape with dim `dim_node` replaced by `replacement` (a tuple, () to drop it)."""
    dim = int_value(dim_node) if dim_node is not None else None
    shape = receiver.shape
    position = None if shape is None or dim is None else shape_ops.axis(dim, len(shape))
    if position is None or replacement is None or shape_ops.has_group(shape):
        return receiver.with_shape(None)
    return receiver.with_shape(tuple(shape[:position]) + tuple(replacement) + tuple(shape[position + 1:]))


def _narrow(interp, receiver, args):
    _eval_all(interp, args)
    length = int_value(args.get(2, "length"))
    return _dim_replaced(receiver, args.get(0, "dim"), None if length is None or length < 0 else (Const(length),))


def _select(interp, receiver, args):
    _eval_all(interp, args)
    return _dim_replaced(receiver, args.get(0, "dim"), ())


def _index_select(interp, receiver, args):
    """`x.index_select(dim, index)`: that dim becomes as long as the (1-d or 0-d) index."""
    interp.eval(args.get(0, "dim"))
    index = interp.eval(args.get(1, "index"))
    length = None
    if type(index) is TensorFact and index.shape is not None and len(index.shape) <= 1:
        length = (index.shape[0] if index.shape else Const(1),)
    return _dim_replaced(receiver, args.get(0, "dim"), length)


def _gather(interp, receiver, args):
    """`x.gather(dim, index)` (and `torch.gather(x, dim, index)`): the index's shape, x's dtype."""
    interp.eval(args.get(0, "dim"))
    index = interp.eval(args.get(1, "index"))
    for name, value in args.keywords.items():
        if name not in ("dim", "index"):
            interp.eval(value)  # sparse_grad
    if type(index) is not TensorFact:
        return receiver.with_shape(None)
    return receiver.with_shape(index.shape)


def _movedim(interp, receiver, args):
    source, destination = args.get(0, "source"), args.get(1, "destination")
    _eval_all(interp, args)
    shape = receiver.shape
    if shape is None or source is None or destination is None or shape_ops.has_group(shape):
        return receiver.with_shape(None)
    sources = literal_axes(CallArgs([source], {}, False))
    targets = literal_axes(CallArgs([destination], {}, False))
    if sources is None or targets is None or len(sources) != len(targets):
        return receiver.with_shape(None)
    sources = [shape_ops.axis(a, len(shape)) for a in sources]
    targets = [shape_ops.axis(a, len(shape)) for a in targets]
    if None in sources or None in targets or len(set(sources)) != len(sources) or len(set(targets)) != len(targets):
        return receiver.with_shape(None)
    order = [None] * len(shape)
    for s, t in zip(sources, targets):
        order[t] = s
    rest = iter(i for i in range(len(shape)) if i not in sources)
    order = [next(rest) if o is None else o for o in order]
    return receiver.with_shape(tuple(shape[i] for i in order))


def _ravel(interp, receiver, args):
    _eval_all(interp, args)
    shape = receiver.shape
    if shape is None or shape_ops.has_group(shape):
        return receiver.with_shape(None)
    return receiver.with_shape((shape_ops.product(shape),))


def _tile(interp, receiver, args):
    """`x.tile(dims)`: like repeat, with dims padded by 1s on the left to the rank (or the shape)."""
    _eval_all(interp, args)
    reps = literal_axes(args)
    shape = receiver.shape
    if shape is None or reps is None or any(r < 0 for r in reps) or shape_ops.has_group(shape):
        return receiver.with_shape(None)
    width = max(len(reps), len(shape))
    reps = [1] * (width - len(reps)) + list(reps)
    shape = (Const(1),) * (width - len(shape)) + tuple(shape)
    return receiver.with_shape(tuple(d if r == 1 else shape_ops.product((Const(r), d)) for r, d in zip(reps, shape)))
