"""Small torch values model code builds masks with: `torch.finfo(dtype).min` (and `iinfo`, `.max`,
`.eps`, ...) is a Python number, and `torch.tensor(data)` of a number is a 0-d tensor, of a flat
list of n numbers a 1-d tensor of n — so `torch.where(mask, scores, torch.tensor(min_value))` keeps
the scores' shape (GPT-2's `_upcast_and_reordered_attn`)."""

from __future__ import annotations

from shape_annotations import Const

from ..analysis.facts import DimFact, DTypeFact, IntFact, ScalarFact, SequenceFact, TensorFact
from .objects import BoolFact


class NumericLimits:
    """What `torch.finfo(dtype)` / `torch.iinfo(dtype)` returns: every attribute is a number."""

    __slots__ = ()


NUMERIC_LIMITS = NumericLimits()
LIMITS_FUNCTIONS = frozenset({"torch.finfo", "torch.iinfo"})
# The run models eager execution, the one FlopCounterMode counts: no compiler, exporter, tracer or
# graph capture is active, so torch's own checks for them are false (transformers' `is_tracing`,
# `is_torchdynamo_compiling`, a model's `if torch.jit.is_scripting():`).
EAGER_CHECKS = frozenset({
    "torch.compiler.is_compiling", "torch.compiler.is_exporting", "torch.compiler.is_dynamo_compiling",
    "torch._dynamo.is_compiling", "torch._dynamo.external_utils.is_compiling", "torch.jit.is_tracing",
    "torch.jit.is_scripting", "torch._C._get_tracing_state", "torch.cuda.is_current_stream_capturing",
    "torch.xpu.is_current_stream_capturing", "torch.fx._symbolic_trace.is_fx_tracing",
    "torch._utils.is_compiling", "torch.onnx.is_in_onnx_export",
})
# Tensor subclasses and wrappers that only tracing makes: an eager tensor is none of them.
TRACING_TYPES = frozenset({"torch.fx.Proxy", "torch._subclasses.FakeTensor", "torch._subclasses.fake_tensor.FakeTensor",
                           "torch.fx.proxy.Proxy"})
TENSOR_FUNCTIONS = frozenset({"torch.tensor", "torch.as_tensor"})
_NUMBERS = (ScalarFact, DimFact, IntFact, BoolFact)


def eager_check(interp, args):
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)
    return BoolFact(False)


def numeric_limits(interp, args):
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)
    return NUMERIC_LIMITS


def limit_attribute(name: str):
    """`finfo.min`, `.max`, `.eps`, `.tiny`, `.resolution`, `.bits`: numbers; anything else unknown."""
    return ScalarFact() if name in ("min", "max", "eps", "tiny", "smallest_normal", "resolution", "bits") else None


def tensor_from_data(interp, args):
    """`torch.tensor(x, dtype=...)`: the shape of the data when it is a number or a flat sequence of
    numbers; its dtype when given or when the data says it (ints, bools)."""
    data = interp.eval(args.get(0, "data"))
    dtype_fact = None
    for key, value in args.keywords.items():
        fact = interp.eval(value)
        if key == "dtype":
            dtype_fact = fact
    if type(data) in _NUMBERS:
        shape, items = (), (data,)
    elif type(data) is SequenceFact and data.items and all(type(item) in _NUMBERS for item in data.items):
        shape, items = (Const(len(data.items)),), data.items
    else:
        return TensorFact(None, framework="torch")
    if type(dtype_fact) is DTypeFact:
        dtype = dtype_fact.dtype
    elif args.keywords.get("dtype") is None and all(type(item) in (DimFact, IntFact) for item in items):
        dtype = "int64"
    elif args.keywords.get("dtype") is None and all(type(item) is BoolFact for item in items):
        dtype = "bool"
    else:
        dtype = None
    return TensorFact(shape, dtype, framework="torch")
