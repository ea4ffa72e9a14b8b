"""The op table's entries for elementwise maths and reductions: unary and binary ops (torch's by
what their derivative reads, the rest in groups sharing a shape and dtype rule), their in-place
forms, activations (methods, `torch.nn.functional`, numpy's and jax's), reductions and cumulative
ops. op_table.py assembles them with the other families; op_entry.py says what each field means."""

from __future__ import annotations

from . import dtype_rules, functional_ops, linear_solves, pointwise_ops, selection_ops, \
    tensor_functions as function_rules, tensor_methods as method_rules
from .op_entry import EXTREMUM, INPUT, INPUT_BUFFER, INPUT_RESULT, NN_FUNCTIONAL as _F, NOTHING, RESULT, Op, ops
from .pointwise_ops import binary, reduction, unary

_FLOAT = unary(dtype_rules.float_result)  # float maths: integer and bool inputs give torch's default float
_same = method_rules._same

# groups of torch ops sharing a shape and dtype rule, `torch.NAME` their method's (checked against
# torch's OpInfo samples in tests/conformance); their saved rules are not held against autograd yet
UNARY_FLOAT = (
    "acosh", "asinh", "atanh", "tan", "erfc", "erfinv", "log10", "log2", "digamma", "lgamma", "i0", "sinc",
    "deg2rad", "rad2deg", "logit",
)
UNARY_SAME = ("ceil", "floor", "trunc", "positive", "sgn", "bitwise_not")
UNARY_BOOL = ("logical_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit")
BINARY_SAME = (
    "fmax", "fmin", "fmod", "remainder", "floor_divide", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm", "heaviside", "nextafter", "logaddexp", "logaddexp2",
    "hypot", "igamma", "igammac",
)
BINARY_FLOAT = ("atan2", "copysign", "xlogy")
BINARY_BOOL = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")
# in-place forms whose out-of-place op is in the table: the result is the receiver itself
INPLACE = tuple(f"{name}_" for name in (
    *UNARY_FLOAT, "acos", "asin", "atan", "cosh", "sinh", "erf", "exp2", "expm1", "log1p", *UNARY_SAME, "frac",
    *BINARY_SAME, *BINARY_FLOAT, *BINARY_BOOL, "logical_not", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh",
    "sigmoid", "abs", "neg", "reciprocal", "square", "pow", "float_power", "round", "sign", "tril", "triu", "relu",
    "true_divide"))
_NUMPY_AND_JAX = ("numpy", "jax.numpy")

OPS: tuple[Op, ...] = (
    # arithmetic that keeps nothing for the backward
    *ops("add sub", torch=True, saved=NOTHING, shape=binary(dtype_rules.same)),
    *ops("add_ sub_", saved=NOTHING, shape=_same),
    Op("neg", torch=True, saved=NOTHING, shape=_same),
    Op("sign", torch=True, saved=NOTHING, shape=_same, torch_shape=function_rules.preserve),
    Op("frac", torch=True, saved=NOTHING, shape=pointwise_ops.same),
    Op("sum", torch=True, saved=NOTHING, shape=reduction(dtype_rules.accumulated, dtype_keyword=True)),
    Op("mean", torch=True, saved=NOTHING, shape=reduction(dtype_rules.same, dtype_keyword=True)),
    Op("cumsum", torch=True, saved=NOTHING, shape=unary(dtype_rules.accumulated, 1)),
    # elementwise maths, by what its derivative reads
    Op("square", torch=True, saved=INPUT, shape=unary(dtype_rules.squared)),
    Op("abs", torch=True, saved=INPUT, shape=unary(dtype_rules.real_result)),
    *ops("erf cos sin log log1p atan asin acos sinh cosh", torch=True, saved=INPUT, shape=_FLOAT),
    Op("clamp", torch=True, saved=INPUT, shape=_same, torch_shape=function_rules.preserve),
    *ops("clamp_min clamp_max pow", torch=True, saved=INPUT, shape=binary(dtype_rules.same)),
    Op("clip", torch=True, saved=INPUT),
    Op("var", torch=True, saved=INPUT, shape=reduction(dtype_rules.real_float_result, keepdim_position=2)),
    *ops("exp tanh sigmoid rsqrt sqrt exp2 reciprocal expm1", torch=True, saved=RESULT, shape=_FLOAT),
    Op("relu", torch=True, saved=RESULT, shape=_same, torch_shape=function_rules.preserve),
    *ops("softmax log_softmax", torch=True, saved=RESULT, shape=unary(dtype_rules.same, 1)),
    # activations of torch.nn.functional, by what their derivative reads
    *ops((_F + name for name in ("gelu", "softplus", "silu", "mish", "elu", "leaky_relu", "relu6", "hardtanh")),
         saved=INPUT, shape=function_rules.preserve),
    Op(_F + "glu", saved=INPUT, shape=functional_ops._glu),
    Op(_F + "relu", saved=RESULT, shape=function_rules.preserve),
    *(Op(_F + name, saved=RESULT, shape=name) for name in ("sigmoid", "tanh", "softmax", "log_softmax")),
    Op(_F + "logsigmoid", saved=INPUT_BUFFER, shape=function_rules.preserve),
    # reductions whose derivative reads the input and the result
    Op("logsumexp", torch=True, saved=INPUT_RESULT, shape=reduction(dtype_rules.float_result)),
    Op("norm", torch=True, saved=INPUT_RESULT,
       shape=reduction(dtype_rules.real_float_result, dim_position=1, keepdim_position=2, dtype_keyword=True)),
    *ops("amax amin", torch=True, saved=INPUT_RESULT, shape=reduction(dtype_rules.same)),
    Op("std", torch=True, saved=INPUT_RESULT, shape=reduction(dtype_rules.real_float_result, keepdim_position=2)),
    # `torch.linalg.vector_norm(x, ord, dim, keepdim, *, dtype)`: after the tensor, `Tensor.norm`'s order
    Op("torch.linalg.vector_norm", saved=INPUT_RESULT, shape="norm"),
    Op("torch.linalg.solve_triangular", saved=INPUT_RESULT, shape=linear_solves._solve_triangular),
    *ops("max min", torch=True, saved=EXTREMUM, shape=pointwise_ops._extreme),
    # elementwise ops whose saved tensors are not held against autograd yet
    *ops("mul maximum minimum", torch=True, shape=binary(dtype_rules.same)),
    *ops("div true_divide", torch=True, shape=pointwise_ops.division),
    Op("float_power", torch=True, shape=pointwise_ops.float_power),
    *ops("negative round", torch=True, shape=_same),
    Op("nan_to_num", torch=True, shape=_same, torch_shape=function_rules.preserve),
    *ops("silu gelu clamp_ mul_ div_ scale", shape=_same),
    *ops(UNARY_FLOAT, torch=True, shape=unary(dtype_rules.float_result)),
    *ops(UNARY_SAME, torch=True, shape=pointwise_ops.same),
    *ops(UNARY_BOOL, torch=True, shape=unary(pointwise_ops._to_bool)),
    Op("angle", torch=True, shape=unary(pointwise_ops._angle)),
    *ops(BINARY_SAME, torch=True, shape=binary(dtype_rules.same)),
    *ops(BINARY_FLOAT, torch=True, shape=binary(dtype_rules.float_result)),
    *ops(BINARY_BOOL, torch=True, shape=binary(pointwise_ops._to_bool)),
    Op("isclose", torch=True, shape=binary(pointwise_ops._to_bool)),
    *ops(INPLACE, shape=pointwise_ops.same),
    # `x.lerp(end, weight)`, `x.addcmul(t1, t2, value=)`: all three broadcast together
    Op("lerp", torch=True, shape=selection_ops._ternary("end", "weight")),
    *ops("addcmul addcdiv", torch=True, shape=selection_ops._ternary("tensor1", "tensor2")),
    *ops("clamp_min_ clamp_max_ lerp_ addcmul_ addcdiv_", shape=pointwise_ops.same),
    # reductions and cumulative ops whose saved tensors are not held against autograd yet
    Op("prod", torch=True, shape=reduction(dtype_rules.accumulated, dtype_keyword=True)),
    *ops("any all", torch=True, shape=reduction(dtype_rules.truth)),
    Op("nansum", torch=True, shape=reduction(dtype_rules.accumulated, dtype_keyword=True)),
    Op("nanmean", torch=True, shape=reduction(dtype_rules.same, dtype_keyword=True)),
    *ops("argmax argmin count_nonzero", torch=True, shape=reduction(pointwise_ops._to_int64)),
    Op("trace", torch=True, shape=selection_ops._trace),
    Op("cumprod", torch=True, shape=unary(dtype_rules.accumulated, 1)),
    Op("logcumsumexp", torch=True, shape=unary(dtype_rules.float_result)),
    *ops(("torch.diff", *(f"{module}.diff" for module in _NUMPY_AND_JAX)), shape=function_rules._diff),
    *ops("torch.outer torch.ger", shape=functional_ops._outer),
    Op("torch.histc", shape=functional_ops._histc),
    # activations whose saved tensors are not held against autograd yet: elementwise, the input's
    # shape and dtype (softsign and tanhshrink make integers torch's default float)
    *ops((_F + name for name in ("celu", "hardshrink", "hardsigmoid", "hardswish", "rrelu", "selu", "softshrink",
                                 "threshold", "prelu")), shape=function_rules.preserve),
    *ops((_F + "softsign", _F + "tanhshrink"), shape=function_rules.preserve_float),
    Op(_F + "softmin", shape="softmax"),
    # numpy's and jax's maths: an integer input's float dtype is left to the framework (unknown)
    *ops("numpy.abs numpy.square jax.numpy.abs jax.numpy.square jax.nn.relu", shape=function_rules.preserve),
    *ops((*(f"{module}.{name}" for module in _NUMPY_AND_JAX for name in ("exp", "tanh", "sqrt", "log")),
          *(f"jax.nn.{name}" for name in ("softmax", "log_softmax", "gelu", "silu", "sigmoid", "swish")),
          "jax.lax.rsqrt"), shape=function_rules.preserve_float),
)
# the torch functions that take a Python number first (checked against torch: `torch.pow(2, t)`;
# `torch.maximum(2, t)`, `torch.atan2(2, t)` raise TypeError)
_NUMBER_FIRST = frozenset(("add", "sub", "mul", "div", "true_divide", "pow", "float_power", "remainder",
                           "floor_divide", "xlogy"))
OPS = tuple(Op(**{**op.__dict__, "number_first": True}) if op.torch and op.name in _NUMBER_FIRST else op
            for op in OPS)
