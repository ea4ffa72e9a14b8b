"""The transfer tables, one row per op: an expression evaluated by the interpreter on known facts, and
the shape (and dtype) it must give. A meta-test fails when an op of `op_table.METHODS` or
`op_table.FUNCTIONS` has no row, so no op lands untested.

Operands: x is torch [b, s, d] float32, m a torch bool [s, s] mask, n a numpy [s, d] float64,
j a jax [b, s, d] float32. A row's expected shape is written as dims (`"b d s"`), `"?"` for a
tensor of unknown shape, a tuple of shapes for a sequence result, or a DimFact as `int:NAME`.
"""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from shape_annotations import Sym, render_dim
from tensorcost_lint.analysis import op_table, op_table_maths
from tensorcost_lint.analysis.context import FileSettings, Recorder, UnitContext
from tensorcost_lint.analysis.evaluator import Evaluator
from tensorcost_lint.analysis.facts import DimFact, ScalarFact, SequenceFact, TensorFact
from tensorcost_lint.analysis.imports import import_table_from_ast

HEADER = ("import torch\nimport torch.nn.functional as F\nimport numpy as np\nimport jax\nimport jax.numpy as jnp\n"
          "from jax import lax\nimport einops\nimport einx\n")
B, S, D = Sym("b"), Sym("s"), Sym("d")
ENV = {
    "x": TensorFact((B, S, D), "float32", framework="torch"),
    "m": TensorFact((S, S), "bool", framework="torch"),
    "n": TensorFact((S, D), "float64", framework="numpy"),
    "j": TensorFact((B, S, D), "float32", framework="jax"),
}
SIZES = {"b": 2, "s": 8, "d": 4}


def infer(expression: str):
    source = HEADER + expression + "\n"
    module = cst.parse_module(source)
    settings = FileSettings("t.py", import_table_from_ast(ast.parse(source)), SIZES, "float32", False, ())
    unit = UnitContext(settings, Recorder(), module)
    return Evaluator(unit, dict(ENV)).eval(module.body[-1].body[0].value)


def shown(fact):
    if type(fact) is SequenceFact:
        return tuple(shown(item) for item in fact.items)
    if type(fact) is DimFact:
        return f"int:{render_dim(fact.dim)}"
    if type(fact) is ScalarFact:
        return "scalar"
    assert type(fact) is TensorFact, fact
    return "?" if fact.shape is None else " ".join(render_dim(d) for d in fact.shape)


# Methods that keep the receiver's shape and dtype (elementwise maths, in-place updates, copies).
SAME_METHODS = (
    "contiguous", "clone", "detach", "cpu", "cuda", "requires_grad_", "softmax", "log_softmax", "masked_fill",
    "masked_fill_", "tril", "triu", "exp", "tanh", "sigmoid", "relu", "abs", "neg", "sqrt", "rsqrt", "clamp",
    "clamp_", "square", "log", "sin", "cos", "mul_", "add_", "div_", "sub_", "scale", "zero_",
    "fill_", "normal_", "uniform_", "copy_", "pin_memory", "block_until_ready", "round", "sign", "reciprocal",
    "silu", "gelu", "nan_to_num", "cumsum", "cumprod", "bernoulli_",
)
DTYPE_METHODS = {"float": "float32", "half": "float16", "bfloat16": "bfloat16", "double": "float64", "int": "int32",
                 "long": "int64", "short": "int16", "bool": "bool", "char": "int8", "byte": "uint8"}
BROADCASTING_METHODS = ("mul", "add", "sub", "div", "true_divide", "maximum", "minimum", "pow")
METHOD_ROWS = {
    **{name: (f"x.{name}()", "b s d") for name in SAME_METHODS},
    **{name: (f"x.{name}()", "b s d", dtype) for name, dtype in DTYPE_METHODS.items()},
    **{name: (f"x.{name}(x[0])", "b s d") for name in BROADCASTING_METHODS},
    "sum": ("x.sum(-1)", "b s"), "mean": ("x.mean(dim=1, keepdim=True)", "b 1 d"), "amax": ("x.amax(-1)", "b s"),
    "float_power": ("x.float_power(2)", "b s d", "float64"), "where": ("x[0].where(m[:, :1], x)", "b s d", "float32"),
    "masked_scatter": ("x.masked_scatter(m[:, :1], x)", "b s d", "float32"),
    "amin": ("x.amin((0, 2))", "s"), "prod": ("x.prod()", ""), "std": ("x.std(-1, keepdim=True)", "b s 1"),
    "var": ("x.var(1)", "b d"), "logsumexp": ("x.logsumexp(-1)", "b s"), "norm": ("x.norm(dim=-1)", "b s"),
    "any": ("x.any(0)", "s d"), "all": ("x.all()", ""),
    "transpose": ("x.transpose(1, 2)", "b d s"), "swapaxes": ("x.swapaxes(0, -1)", "d s b"),
    "swapdims": ("x.swapdims(0, 1)", "s b d"), "t": ("x[0].t()", "d s"), "permute": ("x.permute(2, 0, 1)", "d b s"),
    "view": ("x.view(b, s, 2, -1)", "b s 2 d//2"), "reshape": ("x.reshape(-1, d)", "b*s d"),
    "view_as": ("x[0].view_as(n)", "s d"), "reshape_as": ("x.reshape_as(m)", "s s"), "expand_as": ("m[0].expand_as(x)", "b s d"),
    "unsqueeze": ("x.unsqueeze(1)", "b 1 s d"), "squeeze": ("x.unsqueeze(0).squeeze(0)", "b s d"),
    "expand": ("x[0].expand(b, -1, -1)", "b s d"), "broadcast_to": ("x[0].broadcast_to(b, s, d)", "b s d"),
    "repeat": ("x.repeat(1, 2, 1)", "b 2*s d"), "repeat_interleave": ("x[..., : x.shape[-1] // 2].repeat_interleave(2, dim=-1)", "b s 2*(d//2)"),
    "split": ("x.split(2, dim=-1)", ("b s 2", "b s 2")), "chunk": ("x.chunk(2, -1)", ("b s d//2", "b s d//2")),
    "unbind": ("x.reshape(b, s, 2, -1).unbind(2)", ("b s d//2", "b s d//2")),
    "size": ("x.size(-1)", "int:d"), "to": ("x.to(torch.float16)", "b s d", "float16"),
    "type": ("x.type(torch.float64)", "b s d", "float64"), "astype": ("n.astype(np.float32)", "s d", "float32"),
    "type_as": ("x.type_as(n)", "b s d", "float64"), "flatten": ("x.flatten(1)", "b s*d"),
    "dim": ("x.dim()", "int:3"), "numel": ("x.numel()", "int:b*s*d"), "item": ("x.item()", "scalar"),
    "new_ones": ("x.new_ones((), dtype=torch.bool)", "", "bool"), "new_zeros": ("x.new_zeros(b, s)", "b s", "float32"),
    "new_empty": ("x.new_empty((s, d))", "s d", "float32"), "new_full": ("m.new_full((b, s), True)", "b s", "bool"),
}

# op_table_maths' groups, one row per op by the rule its group shares (tests/conformance runs each on
# torch's own samples): float maths make ints float32, comparisons give bool, in-place ops keep the receiver.
_P = op_table_maths
METHOD_ROWS.update({
    **{name: (f"x.int().{name}()", "b s d", "float32") for name in _P.UNARY_FLOAT},
    **{name: (f"x.{name}()", "b s d", "float32") for name in (*_P.UNARY_SAME, "fliplr", "flipud")},
    **{name: (f"x.{name}()", "b s d", "bool") for name in _P.UNARY_BOOL},
    **{name: (f"x[0].{name}(x)", "b s d", "float32") for name in _P.BINARY_SAME},
    **{name: (f"x.int().{name}(x[0].int())", "b s d", "float32") for name in _P.BINARY_FLOAT},
    **{name: (f"x.{name}(x[:, :1])", "b s d", "bool") for name in _P.BINARY_BOOL},
    **{name: (f"x.int().{name}(x)", "b s d", "int32") for name in _P.INPLACE},
    "angle": ("torch.zeros(3, dtype=torch.complex64).angle()", "3", "float32"),
    "nansum": ("x.bool().nansum(1)", "b d", "int64"), "nanmean": ("x.nanmean(-1, keepdim=True)", "b s 1", "float32"),
    "argmax": ("x.argmax(-1)", "b s", "int64"), "argmin": ("x.argmin()", "", "int64"),
    "count_nonzero": ("x.count_nonzero((0, 1))", "d", "int64"),
    "max": ("x.max(1)", ("b d", "b d")), "min": ("x.min()", "", "float32"),
    "rot90": ("x.rot90(1, (1, 2))", "b d s"), "narrow": ("x.narrow(1, 0, 3)", "b 3 d"),
    "select": ("x.select(1, 0)", "b d"), "index_select": ("x.index_select(1, torch.zeros(3, dtype=torch.long))", "b 3 d"),
    "gather": ("x.gather(1, x.long()[:, :2])", "b 2 d"),
    "movedim": ("x.movedim(0, -1)", "s d b"), "moveaxis": ("x.moveaxis((0, 1), (1, 0))", "s b d"),
    "ravel": ("x.ravel()", "b*s*d"), "tile": ("x[0].tile(2, 1, 1)", "2 s d"),
    "negative": ("x.negative()", "b s d", "float32"), "cfloat": ("x.cfloat()", "b s d", "complex64"),
    "cdouble": ("x.cdouble()", "b s d", "complex128"),
})
# ops of op_table.OPS whose rule the groups share, on entries of their own (with a saved rule)
METHOD_ROWS.update({
    **{name: (f"x.int().{name}()", "b s d", "float32")
       for name in ("acos", "asin", "atan", "cosh", "sinh", "erf", "exp2", "expm1", "log1p")},
    **{name: (f"x.{name}()", "b s d", "float32") for name in ("frac", "flip", "roll")},
})

# selection_ops' rules: writes into the receiver, sorts, picks along a dim, ternary elementwise ops
_WRITES = ("index_fill", "index_copy", "index_add", "scatter", "scatter_add", "scatter_reduce", "index_put", "put",
           "diagonal_scatter", "select_scatter", "slice_scatter", "renorm", "msort", "conj", "conj_physical",
           "resolve_conj", "resolve_neg", "bernoulli")
METHOD_ROWS.update({
    **{name: (f"x.{name}()", "b s d", "float32") for name in (
        *_WRITES, *(f"{n}_" for n in _WRITES[:8]), "renorm_", "conj_physical_", "clamp_min_", "clamp_max_", "lerp_",
        "addcmul_", "addcdiv_")},
    "logcumsumexp": ("x.int().logcumsumexp(0)", "b s d", "float32"),
    "clamp_min": ("x[0].clamp_min(x)", "b s d", "float32"), "clamp_max": ("x.clamp_max(0.5)", "b s d", "float32"),
    "isclose": ("x.isclose(x[0])", "b s d", "bool"),
    "sort": ("x.sort(-1)", ("b s d", "b s d")), "cummax": ("x.cummax(0)", ("b s d", "b s d")),
    "cummin": ("x.cummin(1)", ("b s d", "b s d")), "argsort": ("x.argsort()", "b s d", "int64"),
    "trace": ("x[0].int().trace()", "", "int64"), "topk": ("x.topk(3)", ("b s 3", "b s 3")),
    "median": ("x.median()", "", "float32"), "nanmedian": ("x.nanmedian(1, True)", ("b 1 d", "b 1 d")),
    "mode": ("x.mode()", ("b s", "b s")), "kthvalue": ("x.kthvalue(2, 0)", ("s d", "s d")),
    "lerp": ("x[0].lerp(x, 0.5)", "b s d", "float32"), "addcmul": ("x[0, 0].addcmul(x[0], x)", "b s d", "float32"),
    "addcdiv": ("x.addcdiv(x, x, value=2)", "b s d", "float32"),
})


def _as_function(name: str, method_row):
    """`torch.NAME(receiver, *args)` from the method's row `receiver.NAME(*args)`: the same answer."""
    expression, *expected = method_row
    call = ast.parse(expression, mode="eval").body
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == name, expression
    arguments = [ast.unparse(call.func.value), *(ast.unparse(a) for a in call.args),
                 *(f"{k.arg}={ast.unparse(k.value)}" for k in call.keywords)]
    return (f"torch.{name}({', '.join(arguments)})", *expected)


# Functions that keep their input's shape: activations, normalisations, elementwise maths.
PRESERVING_FUNCTIONS = (
    "torch.softmax", "torch.log_softmax", "torch.nn.functional.softmax", "torch.nn.functional.log_softmax",
    "torch.nn.functional.gelu", "torch.nn.functional.relu", "torch.nn.functional.silu", "torch.nn.functional.dropout",
    "torch.nn.functional.layer_norm", "torch.nn.functional.rms_norm", "torch.nn.functional.normalize",
    "torch.nn.functional.tanh", "torch.nn.functional.sigmoid", "torch.nn.functional.leaky_relu",
    "torch.nn.functional.mish", "torch.nn.functional.elu", "torch.tanh", "torch.sigmoid", "torch.exp", "torch.relu",
    "torch.tril", "torch.triu", "torch.abs", "torch.sqrt", "torch.rsqrt", "torch.square", "torch.clamp",
    "torch.masked_fill", "torch.dropout", "torch.nan_to_num", "torch.sign", "torch.log", "torch.cumsum",
    "torch.cumprod", "numpy.exp", "numpy.tanh", "numpy.sqrt", "numpy.abs", "numpy.tril", "numpy.triu", "numpy.log", "numpy.square",
    "jax.nn.softmax", "jax.nn.log_softmax", "jax.nn.gelu", "jax.nn.relu", "jax.nn.silu", "jax.nn.sigmoid",
    "jax.nn.swish", "jax.numpy.exp", "jax.numpy.tanh", "jax.numpy.sqrt", "jax.numpy.tril", "jax.numpy.triu",
    "jax.numpy.abs", "jax.numpy.log", "jax.numpy.square", "jax.lax.rsqrt",
)
_ALIAS = {"torch.nn.functional.": "F.", "numpy.": "np.", "jax.numpy.": "jnp.", "jax.lax.": "lax."}


def _written(name: str) -> str:
    for prefix, alias in _ALIAS.items():
        if name.startswith(prefix):
            return alias + name[len(prefix):]
    return name


def _operand(name: str) -> str:
    return "n" if name.startswith("numpy") else "j" if name.startswith("jax") else "x"


FUNCTION_ROWS = {
    **{name: (f"{_written(name)}({_operand(name)})", "s d" if name.startswith("numpy") else "b s d")
       for name in PRESERVING_FUNCTIONS},
    "torch.transpose": ("torch.transpose(x, 1, 2)", "b d s"), "torch.swapaxes": ("torch.swapaxes(x, 0, 1)", "s b d"),
    "torch.swapdims": ("torch.swapdims(x, 1, 2)", "b d s"), "torch.permute": ("torch.permute(x, (1, 2, 0))", "s d b"),
    "torch.t": ("torch.t(n)", "d s"), "torch.reshape": ("torch.reshape(x, (b, -1))", "b s*d"),
    "torch.unsqueeze": ("torch.unsqueeze(x, -1)", "b s d 1"), "torch.squeeze": ("torch.squeeze(x[:, :1], 1)", "b d"),
    "torch.flatten": ("torch.flatten(x)", "b*s*d"), "torch.split": ("torch.split(x, 4, 1)", ("b 4 d", "b 4 d")),
    "torch.chunk": ("torch.chunk(x, 2, 1)", ("b s//2 d", "b s//2 d")),
    "torch.unbind": ("torch.unbind(x[:, :3], 1)", ("b d", "b d", "b d")),
    "torch.nn.functional.embedding": ("F.embedding(x.long()[:, :, 0], x[0])", "b s d"),
    "torch.broadcast_to": ("torch.broadcast_to(x[0], (b, s, d))", "b s d"),
    "torch.repeat_interleave": ("torch.repeat_interleave(x, 3)", "3*(b*s*d)"),
    "torch.sum": ("torch.sum(x, 0)", "s d"), "torch.mean": ("torch.mean(x, -1, keepdim=True)", "b s 1"),
    "torch.amax": ("torch.amax(x, (1, 2))", "b"), "torch.logsumexp": ("torch.logsumexp(x, 1)", "b d"),
    "torch.gather": ("torch.gather(x, dim=1, index=x.long()[:, :2])", "b 2 d"),
    "torch.where": ("torch.where(x > 0, x, 0.0)", "b s d"), "numpy.where": ("np.where(n > 0, n, n[0])", "s d"),
    "jax.numpy.where": ("jnp.where(j > 0, j, 0)", "b s d"),
    "torch.diff": ("torch.diff(x, prepend=x[:, :, :1], dim=-1)", "b s d"), "numpy.diff": ("np.diff(n, axis=0)", "s-1 d"),
    "jax.numpy.diff": ("jnp.diff(j, 2)", "b s d-2"),
    "torch.cat": ("torch.cat([x, x], dim=-1)", "b s d+d"), "torch.concat": ("torch.concat((x, x), 1)", "b s+s d"),
    "torch.concatenate": ("torch.concatenate([x, x])", "b+b s d"),
    "numpy.concatenate": ("np.concatenate([n, n], axis=1)", "s d+d"),
    "jax.numpy.concatenate": ("jnp.concatenate([j, j], 0)", "b+b s d"),
    "torch.stack": ("torch.stack([x, x], 1)", "b 2 s d"), "numpy.stack": ("np.stack([n, n, n])", "3 s d"),
    "jax.numpy.stack": ("jnp.stack([j, j], axis=-1)", "b s d 2"),
    "numpy.swapaxes": ("np.swapaxes(n, 0, 1)", "d s"), "jax.numpy.swapaxes": ("jnp.swapaxes(j, 0, 2)", "d s b"),
    "numpy.transpose": ("np.transpose(n)", "d s"), "jax.numpy.transpose": ("jnp.transpose(j, (0, 2, 1))", "b d s"),
    "numpy.reshape": ("np.reshape(n, (-1,))", "s*d"), "jax.numpy.reshape": ("jnp.reshape(j, (b, s, 2, 2))", "b s 2 2"),
    "numpy.expand_dims": ("np.expand_dims(n, 0)", "1 s d"), "jax.numpy.expand_dims": ("jnp.expand_dims(j, -1)", "b s d 1"),
    "numpy.shape": ("np.shape(n)", ("int:s", "int:d")), "jax.numpy.shape": ("jnp.shape(j)[0]", "int:b"),
    "einops.rearrange": ('einops.rearrange(x, "b s d -> b d s")', "b d s"),
    "einops.repeat": ('einops.repeat(x, "b s d -> b s d r", r=3)', "b s d 3"),
    "einops.reduce": ('einops.reduce(x, "b s d -> b d", "mean")', "b d"),
    "einops.pack": ('einops.pack([x, x[:, 0]], "b * d")', ("b s+1 d", (("int:s",), ()))),
    "einops.unpack": ('einops.unpack(x, [(2,), (3, 2)], "b * d")', ("b 2 d", "b 3 2 d")),
    "torch.meshgrid": ('torch.meshgrid(x[0, :, 0], x[0, 0, :], indexing="ij")', ("s d", "s d")),
    "numpy.meshgrid": ("np.meshgrid(n[:, 0], n[0])", ("d s", "d s")),  # numpy's default indexing is "xy"
    "jax.numpy.meshgrid": ('jnp.meshgrid(j[0, :, 0], j[0, 0, :], indexing="ij")', ("s d", "s d")),
    "torch.nn.functional.unfold": ("F.unfold(x.reshape(b, 1, s, d), kernel_size=2, stride=2)", "b 4 8", "float32"),
    "torch.linspace": ("torch.linspace(0, 1, s)", "s", "float32"),
    "torch.logspace": ("torch.logspace(0, 1, 5, dtype=torch.float64)", "5", "float64"),
    "numpy.linspace": ("np.linspace(0, 1, 7)", "7", "float64"),
    "numpy.logspace": ("np.logspace(0, 1)", "50", "float64"),  # num defaults to 50
    "jax.numpy.linspace": ("jnp.linspace(0, 1, s)", "s", "float32"),
    "jax.numpy.logspace": ("jnp.logspace(0, 1, 3)", "3", "float32"),
    "jax.random.normal": ("jax.random.normal(key, (b, s))", "b s", "float32"),
    "jax.random.uniform": ("jax.random.uniform(key, (s,), jnp.bfloat16)", "s", "bfloat16"),
    "numpy.random.randn": ("np.random.randn(s, d)", "s d", "float64"),
    "numpy.random.rand": ("np.random.rand(b, 3)", "b 3", "float64"),
    "torch.randn": ("torch.randn(b, s)", "b s", "float32"), "torch.rand": ("torch.rand((s, d))", "s d", "float32"),
    "torch.randn_like": ("torch.randn_like(n)", "s d", "float64"),
    "torch.rand_like": ("torch.rand_like(x, dtype=torch.float16)", "b s d", "float16"),
    "torch.normal": ("torch.normal(0.0, 0.02, size=(s, d))", "s d", "float32"),
    "torch.linalg.vector_norm": ("torch.linalg.vector_norm(x.half(), 2, dim=-1, keepdim=True)", "b s 1", "float16"),
}
FUNCTION_ROWS.update({
    **{f"torch.{name}": _as_function(name, METHOD_ROWS[name]) for name in (
        "prod", "amin", "any", "all", "std", "var", "norm", "clone", "neg", "negative", "sin", "cos", "reciprocal",
        "round", "add", "mul", "sub", "div", "true_divide", "maximum", "minimum", "pow", "float_power",
        "masked_scatter", *_P.UNARY_FLOAT, *_P.UNARY_SAME, *_P.UNARY_BOOL, *_P.BINARY_SAME, *_P.BINARY_FLOAT,
        *_P.BINARY_BOOL, "fliplr", "flipud", "angle", "nansum", "nanmean", "argmax", "argmin", "count_nonzero",
        "rot90", "select", "moveaxis", "ravel", "tile", *_WRITES, "logcumsumexp", "isclose", "cummax", "cummin",
        "argsort", "trace", "median", "nanmedian", "mode", "kthvalue", "lerp", "addcmul", "addcdiv",
        "acos", "asin", "atan", "cosh", "sinh", "erf", "exp2", "expm1", "log1p", "frac", "flip", "roll", "clamp_max",
        "clamp_min", "index_select", "max", "min", "movedim", "narrow", "scatter", "sort", "topk")},
    **{f"torch.nn.functional.{name}": (f"F.{name}(x)", "b s d", "float32") for name in (
        "celu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "logsigmoid", "relu6", "rrelu", "selu",
        "softplus", "softshrink", "threshold", "prelu", "dropout2d", "dropout3d", "alpha_dropout",
        "feature_alpha_dropout")},
    "torch.nn.functional.softsign": ("F.softsign(x.int())", "b s d", "float32"),
    "torch.nn.functional.tanhshrink": ("F.tanhshrink(x.long())", "b s d", "float32"),
    "torch.nn.functional.softmin": ("F.softmin(x, -1, dtype=torch.float64)", "b s d", "float64"),
})
# functional_ops: functions with no method of the same meaning, and the `*_copy` forms of views
FUNCTION_ROWS.update({
    "torch.nn.functional.pad": ("F.pad(x, (1, 2, 0, 3))", "b s+3 d+3"), "torch.nn.functional.glu": ("F.glu(torch.zeros(2, 6))", "2 3"),
    **{f"torch.nn.functional.adaptive_{kind}_pool{rank}d": (
        f"F.adaptive_{kind}_pool{rank}d(x, 1)", "b 1 1" if rank == 2 else "?")  # x: unbatched 2-d, not 3-d
       for kind in ("avg", "max") for rank in (2, 3)},
    "torch.nn.functional.adaptive_avg_pool1d": ("F.adaptive_avg_pool1d(x, 3)", "b s 3"),
    "torch.nn.functional.adaptive_max_pool1d": ("F.adaptive_max_pool1d(x, 2, True)", ("b s 2", "b s 2")),
    # window_pooling: torch's output sizes, stride defaulting to the kernel, ceil_mode, indices
    "torch.nn.functional.max_pool1d": ("F.max_pool1d(x, 2)", "b s 2"),  # d is 4 here
    "torch.nn.functional.avg_pool1d": ("F.avg_pool1d(x, 3, ceil_mode=True)", "b s 2"),
    "torch.nn.functional.max_pool2d": ("F.max_pool2d(torch.zeros(2, 3, 9, 9), 3, 2, 1)", "2 3 5 5"),
    "torch.nn.functional.avg_pool2d": ("F.avg_pool2d(torch.zeros(2, 3, 9, 9), 2, ceil_mode=True)", "2 3 5 5"),
    "torch.nn.functional.max_pool3d": ("F.max_pool3d(torch.zeros(1, 2, 4, 6, 8), 2, return_indices=True)",
                                       ("1 2 2 3 4", "1 2 2 3 4")),
    "torch.nn.functional.avg_pool3d": ("F.avg_pool3d(torch.zeros(1, 2, 4, 6, 8), (2, 3, 4))", "1 2 2 2 2"),
    "torch.atleast_1d": ("torch.atleast_1d(x[0, 0, 0])", "1"), "torch.atleast_2d": ("torch.atleast_2d(x[0, 0])", "1 d"),
    "torch.atleast_3d": ("torch.atleast_3d(x[0])", "s d 1"),
    "torch.outer": ("torch.outer(x[0, 0], x[0, :, 0])", "d s"), "torch.ger": ("torch.ger(x[0, 0], x[0, 0])", "d d"),
    "torch.histc": ("torch.histc(x, bins=s, min=0, max=3)", "s", "float32"),
    "torch.expand_copy": ("torch.expand_copy(x[0], (b, s, d))", "b s d"),
    "torch.permute_copy": ("torch.permute_copy(x, (2, 0, 1))", "d b s"), "torch.view_copy": ("torch.view_copy(x, (-1,))", "b*s*d"),
    "torch.squeeze_copy": ("torch.squeeze_copy(x[:, :1], 1)", "b d"), "torch.unsqueeze_copy": ("torch.unsqueeze_copy(x, 0)", "1 b s d"),
    "torch.transpose_copy": ("torch.transpose_copy(x, 0, 1)", "s b d"), "torch.t_copy": ("torch.t_copy(x[0])", "d s"),
    "torch.unbind_copy": ("torch.unbind_copy(x[:, :2], 1)", ("b d", "b d")), "torch.alias_copy": ("torch.alias_copy(x)", "b s d"),
    "torch.narrow_copy": ("torch.narrow_copy(x, 2, 1, 2)", "b s 2"),
    "torch.split_with_sizes_copy": ("torch.split_with_sizes_copy(x, [1, 3], -1)", ("b s 1", "b s 3")),
})
# einx_ops: elementwise ops laid out by their descriptions; a literal 1 is a new axis; a description
# that is not plain (brackets, `...`), or axes of sizes that cannot be proven equal, is unknown
FUNCTION_ROWS.update({
    "einx.add": ('einx.add("b s d, d -> b s d", x, x[0, 0])', "b s d", "float32"),
    "einx.subtract": ('einx.subtract("j, i -> 1 i j", x[0, 0], x[0, :, 0])', "1 s d", "float32"),
    "einx.multiply": ('einx.multiply("b s d, -> d s b", x, 2)', "d s b", "float32"),
    "einx.true_divide": ('einx.true_divide("b s d, b s d -> b s d", x.int(), x.int())', "b s d", None),
    "einx.divide": ('einx.divide("b s d, b -> s b d", x, x[:, 0, 0])', "s b d", "float32"),
    "einx.floor_divide": ('einx.floor_divide("b [s] d -> b d", x)', "?"),
    "einx.maximum": ('einx.maximum("b s d, b t d -> b s d", x, x)', "?"),  # t is no output axis
    "einx.minimum": ('einx.minimum("a b c, a b c -> c b a", x, x)', "d s b", "float32"),
    "einx.logaddexp": ('einx.logaddexp("... d, d -> ... d", x, x[0, 0])', "?"),
    "einx.logical_and": ('einx.logical_and("i j, i j -> i j", m, m)', "s s", "bool"),
    "einx.logical_or": ('einx.logical_or("i j, j -> j i", m, m[0])', "s s", "bool"),
    "einx.less": ('einx.less("i, j -> i j", x[0, :, 0], x[0, 0])', "s d", "bool"),
    "einx.less_equal": ('einx.less_equal("i, j -> i j", x[0, :, 0], x[0, :, 0])', "s s", "bool"),
    "einx.greater": ('einx.greater("b s d, -> b s d", x, 0)', "b s d", "bool"),
    "einx.greater_equal": ('einx.greater_equal("s d, d -> s", n, n[0])', "?"),  # d is not in the output
    "einx.equal": ('einx.equal("i j, j -> i j", m, m[0])', "s s", "bool"),
    "einx.not_equal": ('einx.not_equal("b s d, b s d -> b s d", x, j)', "b s d", "bool"),
    "einx.where": ('einx.where("i j, b i j, -> b i j", m, x[:, :, :1].expand(b, s, s), 0.0)', "b s s", "float32"),
})
# complex_views: (real, imaginary) pairs viewed as complex and back, and polar coordinates
FUNCTION_ROWS.update({
    "torch.nn.functional.batch_norm": ("F.batch_norm(x, None, None, training=True)", "b s d", "float32"),
    "torch.bernoulli": ("torch.bernoulli(x.sigmoid())", "b s d", "float32"),
})
FUNCTION_ROWS.update({
    "torch.view_as_complex": ("torch.view_as_complex(x.reshape(b, s, -1, 2))", "b s d//2", "complex64"),
    "torch.view_as_real": ("torch.view_as_real(torch.view_as_complex(x.double().reshape(b, s, -1, 2)))",
                           "b s d//2 2", "float64"),
    "torch.polar": ("torch.polar(x[0], x[:, :1])", "b s d", "complex64"),
})
# linear_solves: per-chunk triangular systems, the batch broadcast and B's matrix dims kept
FUNCTION_ROWS.update({
    "torch.linalg.solve_triangular": ("torch.linalg.solve_triangular((x @ x.transpose(1, 2)).tril(), x[0], upper=False)", "b s d",
                                      "float32"),
})
for _prefix, _written_prefix, _default, _operand_name, _operand_shape in (
        ("torch", "torch", "float32", "x", "b s d"), ("numpy", "np", "float64", "n", "s d"),
        ("jax.numpy", "jnp", "float32", "j", "b s d")):
    sizes = "b, s" if _prefix == "torch" else "(b, s)"
    FUNCTION_ROWS.update({
        f"{_prefix}.empty": (f"{_written_prefix}.empty({sizes})", "b s", _default),
        f"{_prefix}.zeros": (f"{_written_prefix}.zeros({sizes}, dtype={_written_prefix}.float16)", "b s", "float16"),
        f"{_prefix}.ones": (f"{_written_prefix}.ones(({sizes.strip('()')}))", "b s", _default),
        f"{_prefix}.full": (f"{_written_prefix}.full((s, d), 0.5)", "s d", _default),
        f"{_prefix}.empty_like": (f"{_written_prefix}.empty_like({_operand_name})", _operand_shape, None),
        f"{_prefix}.zeros_like": (f"{_written_prefix}.zeros_like({_operand_name})", _operand_shape, None),
        f"{_prefix}.ones_like": (f"{_written_prefix}.ones_like({_operand_name}, dtype={_written_prefix}.int32)",
                                 _operand_shape, "int32"),
        f"{_prefix}.full_like": (f"{_written_prefix}.full_like({_operand_name}, 2.0)", _operand_shape, None),
    })


def test_every_method_has_a_row():
    assert sorted(METHOD_ROWS) == sorted(op_table.METHODS)


def test_every_function_has_a_row():
    assert sorted(FUNCTION_ROWS) == sorted(op_table.FUNCTIONS)


def _check(row):
    expression, expected, *dtype = row
    fact = infer(expression)
    assert shown(fact) == expected, (expression, fact)
    if dtype and dtype[0] is not None:
        assert fact.dtype == dtype[0], (expression, fact.dtype)


@pytest.mark.parametrize("name", sorted(METHOD_ROWS))
def test_method_transfer(name):
    _check(METHOD_ROWS[name])


@pytest.mark.parametrize("name", sorted(FUNCTION_ROWS))
def test_function_transfer(name):
    _check(FUNCTION_ROWS[name])


# Rules fixed where torch's OpInfo samples disagreed (tests/conformance): dtypes torch promotes to,
# positional keepdim, norm's p before dim, chunks of a length they do not divide.
CONFORMANCE_FIX_ROWS = {
    "float op of ints": ("x.int().exp()", "b s d", "float32"),
    "F.softmax dtype": ("F.softmax(x, -1, dtype=torch.float64)", "b s d", "float64"),
    "method softmax dtype": ("x.log_softmax(-1, dtype=torch.float16)", "b s d", "float16"),
    "sum of ints": ("x.int().sum()", "", "int64"), "prod of bools": ("x.bool().prod(0)", "s d", "int64"),
    "cumsum of ints": ("torch.cumsum(x.int(), 0)", "b s d", "int64"),
    "any is bool": ("x.any(0)", "s d", "bool"), "all of uint8": ("x.byte().all()", "", "uint8"),
    "positional keepdim": ("x.logsumexp(1, True)", "b 1 d", "float32"),
    "norm p first": ("x.norm(2, -1)", "b s", "float32"), "std unbiased": ("x.std(1, True, True)", "b 1 d"),
    "abs of complex": ("torch.zeros(3, dtype=torch.complex64).abs()", "3", "float32"),
    "square of bool": ("x.bool().square()", "b s d", "int64"),
    "int true division": ("x.int().div(x.int())", "b s d", "float32"),
    "int floor division": ("x.int().true_divide(x.int()).int().div(x.int(), rounding_mode='floor')", "b s d", "int32"),
    "uneven chunks": ("torch.zeros(5, 4).chunk(2)", ("3 4", "2 4")),
    "pow broadcasts": ("x[0].pow(x)", "b s d", "float32"),
    "empty dims": ("x.sum(dim=())", "?"),
}


@pytest.mark.parametrize("name", sorted(CONFORMANCE_FIX_ROWS))
def test_conformance_fix(name):
    _check(CONFORMANCE_FIX_ROWS[name])


# `torch.normal`'s overloads: a tensor mean or std (broadcast together), or two numbers and a size.
NORMAL_ROWS = {
    "tensor mean": ("torch.normal(x, 1.0)", "b s d", "float32"),
    "tensor mean and std": ("torch.normal(x[0], x[:, :1])", "b s d", "float32"),
    "number mean, tensor std": ("torch.normal(0.0, std=x[:, 0])", "b d", "float32"),
    "numbers and a positional size": ("torch.normal(2.0, 3.0, (s, d))", "s d", "float32"),
    "numbers, size and dtype": ("torch.normal(mean=0.0, std=0.1, size=(b,), dtype=torch.float16)", "b", "float16"),
}


@pytest.mark.parametrize("name", sorted(NORMAL_ROWS))
def test_normal_overloads(name):
    _check(NORMAL_ROWS[name])
    assert infer("torch.normal(0.0, 1.0)") is None  # two numbers and no size: torch refuses it


# `torch.NAME(number, tensor)`: torch's Scalar-self overloads (op entries with number_first), checked
# against torch 2.13 — shape and dtype as the tensor's op with the number
NUMBER_FIRST_ROWS = {
    "pow": ("torch.pow(10000, x[0] / 4)", "s d", "float32"), "pow of ints": ("torch.pow(2, x.long())", "b s d", "int64"),
    "float_power": ("torch.float_power(2, x)", "b s d", "float64"), "sub": ("torch.sub(1, x)", "b s d", "float32"),
    "div of ints": ("torch.div(1, x.int())", "b s d", "float32"), "mul keyword": ("torch.mul(2, other=x)", "b s d"),
    "remainder": ("torch.remainder(3, x)", "b s d", "float32"),
}


@pytest.mark.parametrize("name", sorted(NUMBER_FIRST_ROWS))
def test_number_first(name):
    _check(NUMBER_FIRST_ROWS[name])


def test_a_number_first_where_torch_refuses_it_has_no_shape():
    """`torch.maximum(2, x)` raises TypeError in torch: no shape, not a broadcast."""
    assert infer("torch.maximum(2, x)") is None and infer("torch.atan2(2, x)") is None


def test_a_float_number_leaves_an_int_tensor_dtype_unknown():
    """`ints * 2.5` is float in torch; a number we cannot tell int from float leaves it unknown."""
    assert infer("x.int() * 2.5").dtype is None and infer("x.int() * 2").dtype == "int32"
    assert infer("x.bool() + 1").dtype is None


def test_unknown_stays_unknown():
    """Never a guess: a non-literal axis, an out-of-range axis or two -1s give an unknown shape."""
    for expression in ("x.transpose(k, 1)", "x.permute(0, 1)", "x.view(-1, -1)", "x.flatten(2, 0)", "x.chunk(c, 1)"):
        fact = infer(expression)
        assert fact is None or (type(fact) is TensorFact and fact.shape is None), (expression, fact)


# Indexing with integer tensors (torch's and numpy's advanced indexing), shapes as torch and numpy
# give them (checked by running each on a [2, 8, 4] tensor and an int64 [2, 3] index): i is [p, q].
INDEX_ENV = {"i": TensorFact((Sym("p"), Sym("q")), "int64", framework="torch")}
ADVANCED_INDEX_ROWS = {
    "x[i]": "p q s d", "x[:, i]": "b p q d", "x[i, i]": "p q d", "x[i, :, i]": "p q s",
    "x[0, :, i]": "s p q",  # torch applies the int first (a select); numpy would put p q first
    "x[1, i]": "p q d", "n[i, 0]": "p q",
    # strided slices: len(range(start, d, step)), read where d >= start (d is 4 here, s 8): a length
    # whose `//` would not divide exactly under the sizes (a dim's `//` is exact) is the number itself
    "x[..., 0::2]": "b s 2", "x[..., 1::2]": "b s d//2", "x[:, ::3]": "b 3 d", "x[:, 2::3]": "b 2 d",
}


@pytest.mark.parametrize("expression", sorted(ADVANCED_INDEX_ROWS))
def test_advanced_indexing(expression):
    source = HEADER + expression + "\n"
    module = cst.parse_module(source)
    settings = FileSettings("t.py", import_table_from_ast(ast.parse(source)), SIZES, "float32", False, ())
    unit = UnitContext(settings, Recorder(), module)
    fact = Evaluator(unit, {**ENV, **INDEX_ENV}).eval(module.body[-1].body[0].value)
    assert shown(fact) == ADVANCED_INDEX_ROWS[expression]


def test_where_with_an_unknown_condition_has_no_shape():
    """The condition broadcasts with both values: unknown, it leaves the result unknown (it once gave
    the scalar values' shape, `()`, to a [b, 1, s, s] mask)."""
    assert shown(infer("torch.where(unknown_mask, torch.zeros(()), 0.0)")) == "?"


def _call_module(constructor: str, call: str):
    """`call` with `mod` bound to the module fact `constructor` builds (`nn.ZeroPad2d(1)`)."""
    module_fact = infer(constructor)
    source = HEADER + call + "\n"
    module = cst.parse_module(source)
    settings = FileSettings("t.py", import_table_from_ast(ast.parse(source)), SIZES, "float32", False, ())
    unit = UnitContext(settings, Recorder(), module)
    return Evaluator(unit, {**ENV, "mod": module_fact}).eval(module.body[-1].body[0].value)


# Module rules added with the conformance tests (torch's ModuleInfo samples): one row each. x is
# [b, s, d]: a batched 1-d input of s channels, or an unbatched 2-d one.
MODULE_ROWS = {
    **{name: (f"torch.nn.{name}()", "mod(x)", "b s d") for name in (
        "BatchNorm3d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "CELU", "Hardshrink", "Hardtanh",
        "ReLU6", "LogSigmoid", "Softmax2d", "Softmin", "Softshrink", "Softsign", "Tanhshrink", "Threshold")},
    "ZeroPad1d": ("torch.nn.ZeroPad1d(2)", "mod(x)", "b s d+4"),
    "ConstantPad2d": ("torch.nn.ConstantPad2d((1, 2, 3, 4), 0.5)", "mod(x)", "b s+7 d+3"),
    "ReflectionPad1d": ("torch.nn.ReflectionPad1d((1, 0))", "mod(x)", "b s d+1"),
    "ReplicationPad3d": ("torch.nn.ReplicationPad3d(1)", "mod(x[0])", "?"),  # rank 2 is not a 3-d input
    "CircularPad2d": ("torch.nn.CircularPad2d(-1)", "mod(x)", "b s-2 d-2"),
    "AdaptiveAvgPool1d": ("torch.nn.AdaptiveAvgPool1d(3)", "mod(x)", "b s 3"),
    "AdaptiveAvgPool2d": ("torch.nn.AdaptiveAvgPool2d((None, 2))", "mod(x)", "b s 2"),
    "AdaptiveMaxPool2d": ("torch.nn.AdaptiveMaxPool2d(1, return_indices=True)", "mod(x)", ("b 1 1", "b 1 1")),
    "AdaptiveMaxPool3d": ("torch.nn.AdaptiveMaxPool3d(2, flag)", "mod(x)", "?"),
}


@pytest.mark.parametrize("name", sorted(MODULE_ROWS))
def test_module_rule(name):
    constructor, call, expected = MODULE_ROWS[name]
    assert shown(_call_module(constructor, call)) == expected


def test_a_value_argument_is_its_value_and_quoted_as_one():
    """Calls made with values in hand pass them as values (given_values): `eval` returns the value
    itself, nothing planted in the env, and a message quoting the argument's code gets `<value>`."""
    from tensorcost_lint.analysis.arguments import CallArgs
    from tensorcost_lint.analysis.given_values import Bound, Given
    from tensorcost_lint.analysis.op_table import FUNCTIONS

    module = cst.parse_module(HEADER)
    settings = FileSettings("t.py", import_table_from_ast(ast.parse(HEADER)), SIZES, "float32", False, ())
    unit = UnitContext(settings, Recorder(), module)
    env = dict(ENV)
    evaluator = Evaluator(unit, env)
    for kind in (Given, Bound):
        value = kind(ENV["x"])
        assert evaluator.eval(value) is ENV["x"]
        assert unit.code(value) == "<value>" and unit.bare_code(value) == "<value>"
        out = FUNCTIONS["torch.softmax"](evaluator, CallArgs([value], {"dim": kind(ENV["x"].shape[-1])}, False))
        assert shown(out) == "b s d"
    assert env == ENV  # no name planted
