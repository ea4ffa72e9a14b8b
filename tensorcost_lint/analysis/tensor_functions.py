"""Shape transfer of module-level functions (`torch.transpose`, `F.softmax`, `np.zeros`,
`einops.rearrange`...), keyed by canonical name. Each takes (interp, CallArgs). The table that
names them is op_table.OPS (an entry's `shape`); op_table.FUNCTIONS is read from it."""

from __future__ import annotations

import libcst as cst

from shape_annotations import BinOp, Const, ShapeError, rearrange_shape, reduce_shape, repeat_shape, simplify_dim

from . import dtype_rules, shape_ops, tensor_methods
from .arguments import CallArgs, dim_args
from .literals import int_value
from .problems import EinopsMisfit
from .facts import DimFact, DTypeFact, IntFact, ScalarFact, StringFact, TensorFact, elementwise
from .given_values import Given

_FRAMEWORK_OF_MODULE = {"torch": "torch", "numpy": "numpy", "jax": "jax"}
# Default dtype of constructors: torch and jax make float32, numpy float64.
_DEFAULT_CONSTRUCTOR_DTYPE = {"torch": "float32", "numpy": "float64", "jax": "float32"}


def _eval_rest(interp, args, skip=()) -> None:
    for value in [*args.positional, *args.keywords.values()]:
        if value not in skip:
            interp.eval(value)


def _first_tensor(interp, args, keyword="input"):
    node = args.get(0, keyword)
    fact = interp.eval(node) if node is not None else None
    return node, fact


def preserve(interp, args):
    node, fact = _first_tensor(interp, args)
    _eval_rest(interp, args, skip=(node,))
    if type(fact) in (DimFact, ScalarFact):
        return ScalarFact()  # np.sqrt(d_head) is a number
    return fact.with_shape(fact.shape) if type(fact) is TensorFact else None


def preserve_float(interp, args):
    """np.exp, jnp.sqrt...: the input's shape; an integer input's float dtype is the framework's."""
    fact = preserve(interp, args)
    if type(fact) is TensorFact:
        return fact.with_dtype(dtype_rules.float_result(fact.dtype, fact.framework))
    return fact


def as_method(method: str, methods, number_first: bool = False):
    """`torch.transpose(x, 0, 1)` is `x.transpose(0, 1)`: the rule `methods[method]`, read when the
    function is called (op_table passes its METHODS, whose rules are declared there). With
    `number_first`, `torch.pow(2, t)` (a Python number first, a tensor second) is `t.pow(2)`'s
    broadcast and dtype, each argument evaluated once."""

    def transfer(interp, args):
        node, fact = _first_tensor(interp, args)
        rest = CallArgs(args.positional[1:], {k: v for k, v in args.keywords.items() if k != "input"}, args.starred)
        if type(fact) is not TensorFact:
            if number_first and type(fact) in (DimFact, ScalarFact, IntFact):
                return _number_first(interp, methods[method], fact, rest)
            _eval_rest(interp, rest)
            return None
        return methods[method](interp, fact, rest)

    return transfer


def _number_first(interp, rule, number, rest: CallArgs):
    other_node = rest.positional[0] if rest.positional else next(iter(rest.keywords.values()), None)
    other = interp.eval(other_node) if other_node is not None else None
    if type(other) is not TensorFact or rest.starred:
        _eval_rest(interp, rest, skip=(other_node,))
        return None
    keywords = {k: v for k, v in rest.keywords.items() if v is not other_node}
    return rule(interp, other, CallArgs([Given(number), *rest.positional[1:]], keywords, False))


def _swapaxes(interp, args):
    node, fact = _first_tensor(interp, args, "a")
    a, b = args.get(1, "axis1"), args.get(2, "axis2")
    if type(fact) is not TensorFact or fact.shape is None or a is None or b is None:
        return None
    i, j = int_value(a), int_value(b)
    if i is None or j is None:
        return fact.with_shape(None)
    return fact.with_shape(shape_ops.transpose(fact.shape, i, j))


def _numpy_transpose(interp, args):
    node, fact = _first_tensor(interp, args, "a")
    if type(fact) is not TensorFact or fact.shape is None:
        return None
    axes_node = args.get(1, "axes")
    if axes_node is None:
        return fact.with_shape(shape_ops.reverse(fact.shape))
    if isinstance(axes_node, (cst.Tuple, cst.List)):
        axes = [int_value(e.value) for e in axes_node.elements]
        if None not in axes:
            return fact.with_shape(shape_ops.permute(fact.shape, axes))
    return fact.with_shape(None)


def _reshape(interp, args):
    node, fact = _first_tensor(interp, args, "a")
    shape_node = args.get(1, "shape") or args.keywords.get("newshape")
    if type(fact) is not TensorFact or shape_node is None:
        _eval_rest(interp, args, skip=(node,))
        return None
    return tensor_methods._view(interp, fact, CallArgs([shape_node], {}, False))  # the rule of Tensor.reshape


def _expand_dims(interp, args):
    node, fact = _first_tensor(interp, args, "a")
    index = int_value(args.get(1, "axis")) if args.get(1, "axis") is not None else None
    if type(fact) is not TensorFact or fact.shape is None or index is None:
        return None
    return fact.with_shape(shape_ops.unsqueeze(fact.shape, index))


def _where(interp, args):
    """`torch.where(condition, input, other)`: condition and both values broadcast together; a
    condition whose shape is not known leaves the result's shape unknown (it broadcasts too)."""
    condition = interp.eval(args.get(0, "condition"))
    left, right = interp.eval(args.get(1, "input")), interp.eval(args.get(2, "other"))
    sizes = interp.ctx.settings.sizes
    result = elementwise(left, right, sizes)
    if type(condition) is not TensorFact:
        return result.with_shape(None) if type(result) is TensorFact else None
    if type(result) is TensorFact:
        return result.with_shape(shape_ops.broadcast(condition.shape, result.shape, sizes))
    if type(result) is ScalarFact:  # two numbers: the condition's shape, the default float dtype
        return TensorFact(condition.shape, None, framework=condition.framework)
    return None


def _diff(interp, args):
    """`torch.diff(x, n=1, dim=-1, prepend=None, append=None)`: along `dim`, the length with what
    is prepended and appended, less n."""
    source = interp.eval(args.get(0, "input"))
    n_node, dim_node = args.get(1, "n"), args.get(2, "dim") or args.keywords.get("axis")  # numpy: axis
    extras = [interp.eval(args.get(i, name)) for i, name in ((3, "prepend"), (4, "append"))
              if args.get(i, name) is not None]
    n = 1 if n_node is None else int_value(n_node)
    dim = -1 if dim_node is None else int_value(dim_node)
    if type(source) is not TensorFact or source.shape is None or n is None or dim is None \
            or any(type(e) is not TensorFact or e.shape is None for e in extras):
        return source.with_shape(None) if type(source) is TensorFact else None
    axis = shape_ops.axis(dim, len(source.shape))
    if axis is None or any(len(e.shape) != len(source.shape) for e in extras):
        return source.with_shape(None)
    length = source.shape[axis]
    for extra in extras:
        length = BinOp("+", length, extra.shape[axis])
    length = simplify_dim(BinOp("-", length, Const(n)))
    return source.with_shape(tuple(source.shape[:axis]) + (length,) + tuple(source.shape[axis + 1:]))


def _sequence_of_tensors(interp, node):
    items = interp.listed_items(interp.eval(node))
    if items is not None and all(type(i) is TensorFact for i in items):
        return list(items)
    return None


def _join(kind: str, dim_keywords=("dim", "axis")):
    def transfer(interp, args):
        tensors = _sequence_of_tensors(interp, args.get(0, "tensors"))
        dim_node = args.get(1)
        for keyword in dim_keywords:
            dim_node = args.keywords.get(keyword, dim_node)
        dim = 0 if dim_node is None else int_value(dim_node)
        if not tensors or dim is None:
            return None
        if kind == "cat" and len(tensors) > 1:  # torch.cat skips 1-d empty tensors (`torch.tensor([])`)
            kept = [t for t in tensors if t.shape != (Const(0),)]
            tensors = kept or tensors[:1]
        shapes = [t.shape for t in tensors]
        shape = (shape_ops.concatenate if kind == "cat" else shape_ops.stack)(shapes, dim, interp.ctx.settings.sizes)
        dtype = tensors[0].dtype if all(t.dtype == tensors[0].dtype for t in tensors) else None
        return TensorFact(shape, dtype, framework=tensors[0].framework)

    return transfer


def _constructor(framework: str, *, like: bool = False, fill: bool = False, varargs: bool | None = None):
    """`torch.empty(a, b)`, `torch.zeros((a, b), dtype=...)`, `np.ones(shape)`, `torch.zeros_like(x)`."""

    def transfer(interp, args):
        dtype_node = args.keywords.get("dtype")
        dtype_fact = interp.eval(dtype_node) if dtype_node is not None else None
        dtype = dtype_fact.dtype if type(dtype_fact) is DTypeFact else None
        default = _DEFAULT_CONSTRUCTOR_DTYPE[framework] if dtype_node is None else None  # dtype=cfg.dtype: unknown
        if like:
            source = interp.eval(args.get(0, "input"))
            if type(source) is not TensorFact:
                return None
            return TensorFact(source.shape, dtype or source.dtype, framework=framework)
        sizes_as_varargs = (framework == "torch") if varargs is None else varargs
        nodes = args.positional if sizes_as_varargs and not fill else args.positional[:1]
        if "size" in args.keywords or "shape" in args.keywords:
            nodes = [args.keywords.get("size") or args.keywords.get("shape")]
        for value in args.positional[len(nodes):]:
            interp.eval(value)
        dims = dim_args(interp, CallArgs(list(nodes), {}, args.starred, args.stars), empty=True)
        shape = None if dims is None or None in dims else tuple(dims)
        return TensorFact(shape, dtype or default, framework=framework)

    return transfer


def _normal(interp, args):
    """`torch.normal(mean, std, size=None)`: a tensor mean or std gives their broadcast shape and
    dtype (as arithmetic between them would); two numbers need `size`, the shape of a constructor."""
    mean, std = interp.eval(args.get(0, "mean")), interp.eval(args.get(1, "std"))
    if TensorFact in (type(mean), type(std)):
        for value in [*args.positional[2:], *(v for k, v in args.keywords.items() if k not in ("mean", "std"))]:
            interp.eval(value)
        return elementwise(mean, std if args.get(1, "std") is not None else ScalarFact(), interp.ctx.settings.sizes)
    size = args.get(2, "size")
    rest = CallArgs([size] if size is not None else [], {k: v for k, v in args.keywords.items()
                                                       if k in ("dtype", "size")}, False)
    for value in [*args.positional[3:], *(v for k, v in args.keywords.items() if k not in ("mean", "std", "size", "dtype"))]:
        interp.eval(value)
    return _constructor("torch")(interp, rest) if size is not None else None


def _jax_random(interp, args):
    """`jax.random.normal(key, shape, dtype)`."""
    interp.eval(args.get(0, "key"))
    shape_node = args.get(1, "shape")
    dtype_node = args.get(2, "dtype")
    dtype_fact = interp.eval(dtype_node) if dtype_node is not None else None
    dims = dim_args(interp, CallArgs([shape_node], {}, False)) if shape_node is not None else None
    dtype = dtype_fact.dtype if type(dtype_fact) is DTypeFact else "float32"
    return TensorFact(None if dims is None or None in dims else tuple(dims), dtype, framework="jax")


def _einops(kind: str):
    operation = {"rearrange": rearrange_shape, "repeat": repeat_shape, "reduce": reduce_shape}[kind]

    def transfer(interp, args):
        node, fact = _first_tensor(interp, args, "tensor")
        pattern = interp.eval(args.get(1, "pattern"))
        lengths = {}
        unreadable = False
        for name, value in args.keywords.items():
            if name in ("pattern", "tensor", "reduction"):
                continue
            dim = interp.dim_of(value)
            if dim is not None:
                lengths[name] = dim
            else:
                unreadable = True  # a length we cannot read: a failure would be ours, not the code's
        if kind == "reduce" and len(args.positional) > 2:
            interp.eval(args.positional[2])
        if type(fact) is not TensorFact or type(pattern) is not StringFact or fact.shape is None:
            return fact.with_shape(None) if type(fact) is TensorFact else None
        try:
            shape = operation(pattern.value, tuple(fact.shape), lengths)
        except ShapeError as error:
            if not unreadable and not args.starred and pattern.origin is None:  # a config's text is never shown
                interp.ctx.report(EinopsMisfit(pattern.value, error.message), args.get(1, "pattern"))
            return fact.with_shape(None)
        return fact.with_shape(shape)

    return transfer


def _embedding(interp, args):
    """`F.embedding(indices, weight)`: one row of weight per index, [*indices, embedding_dim]."""
    indices, weight = interp.eval(args.get(0, "input")), interp.eval(args.get(1, "weight"))
    _eval_rest(interp, args, skip=(args.get(0, "input"), args.get(1, "weight")))
    if type(indices) is not TensorFact or type(weight) is not TensorFact:
        return None
    if indices.shape is None or weight.shape is None or len(weight.shape) != 2:
        return TensorFact(None, weight.dtype, framework="torch")
    return TensorFact(tuple(indices.shape) + (weight.shape[1],), weight.dtype, framework="torch")


def _size_of(interp, args):
    fact = interp.eval(args.get(0, "a"))
    return tensor_methods.size(interp, fact, CallArgs(args.positional[1:], {}, False)) if type(fact) is TensorFact else None
