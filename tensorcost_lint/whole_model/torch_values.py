"""Small torch values model code builds masks and position tables with: `torch.arange` of known
bounds is a 1-d tensor of torch's count, `torch.finfo(dtype).min` (and `iinfo`, `.max`, `.eps`, ...)
is a Python number, and `torch.tensor(data)` of a number is a 0-d tensor, of a flat list of n
numbers a 1-d tensor of n — so `torch.where(mask, scores, torch.tensor(min_value))` keeps the
scores' shape (GPT-2's `_upcast_and_reordered_attn`)."""

from __future__ import annotations

from shape_annotations import BinOp, Const, evaluate_dim, simplify_dim

from ..analysis.facts import DimFact, DTypeFact, IntFact, ScalarFact, SequenceFact, TensorFact
from ..analysis.literals import int_value
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


_RANGE_BOUNDS = ("start", "end", "step")


def arange(interp, args):
    """`torch.arange(end)`, `(start, end)`, `(start, end, step)` (also by keyword): torch's
    ceil((end - start) / step) elements, from ints and sizes the run knows; sizes keep their names
    (`arange(t)` is (t,), `arange(s, s + t)` is (t,)). Any other bound — a float, a value not
    known — gives a tensor of no known shape."""
    for name, value in args.keywords.items():
        if name not in _RANGE_BOUNDS and name != "dtype":
            interp.eval(value)
    nodes = dict(zip(_RANGE_BOUNDS[1:] if len(args.positional) == 1 else _RANGE_BOUNDS, args.positional))
    nodes.update({name: args.keywords[name] for name in _RANGE_BOUNDS if name in args.keywords})
    if args.starred or len(args.positional) > 3 or "end" not in nodes:
        for node in nodes.values():
            interp.eval(node)
        return TensorFact(None, framework="torch")
    # each bound evaluated once, in the call's order; `end` as a size (`arange(seq_len)`)
    bounds = {name: interp.dim_of(node) if name == "end" else _bound(interp, node) for name, node in nodes.items()}
    start, end, step = bounds.get("start", Const(0)), bounds["end"], bounds.get("step", Const(1))
    length = _range_length(start, end, step, interp.ctx.settings.sizes)
    if length is None:
        return TensorFact(None, framework="torch")
    dtype = interp.eval(args.keywords["dtype"]) if "dtype" in args.keywords else None
    return TensorFact((length,), dtype.dtype if type(dtype) is DTypeFact else "int64", framework="torch")


def _bound(interp, node):
    """A start or step as a dim (Const for an int, 0 and negatives included), None when unknown."""
    literal = int_value(node)
    if literal is not None:
        return Const(literal)
    fact = interp.eval(node)
    if type(fact) is IntFact:
        return Const(fact.value)
    return fact.dim if type(fact) is DimFact else None


def _range_length(start, end, step, sizes):
    """ceil((end - start) / step) for a positive int step; symbolic when the sizes are not bound (a
    step over 1 kept as a division only where it divides exactly); None when it cannot be told or
    is no positive count (torch's empty range: no shape a contraction can use)."""
    if end is None or start is None or type(step) is not Const or step.value < 1:
        return None
    span = end if start == Const(0) else simplify_dim(BinOp("-", end, start))
    try:
        value = evaluate_dim(span, sizes)
    except Exception:  # noqa: BLE001 - unbound: the symbolic formula
        value = None
    if value is not None:
        count = -(-value // step.value)
        if count < 1:
            return None
        if step.value == 1:
            return span
        return Const(count) if value % step.value else simplify_dim(BinOp("//", span, step))
    if step.value == 1:
        return span
    return simplify_dim(BinOp("//", BinOp("+", span, Const(step.value - 1)), step))
