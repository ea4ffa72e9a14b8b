"""Small torch values model code builds masks with: `torch.finfo(dtype).min` (and `iinfo`, `.max`,
`.eps`, ...) is a Python number, and `torch.tensor(data)` of a number is a 0-d tensor, of a flat
list of n numbers a 1-d tensor of n — so `torch.where(mask, scores, torch.tensor(min_value))` keeps
the scores' shape (GPT-2's `_upcast_and_reordered_attn`); `torch.arange(start, end, step)` holds
as many ints as Python's `range` of the same bounds."""

from __future__ import annotations

import libcst as cst

from shape_annotations import BinOp, Const, Polynomial, evaluate_dim, simplify_dim

from ...analysis.facts import DimFact, DTypeFact, IntFact, ScalarFact, SequenceFact, TensorFact
from ...analysis.literals import int_value
from ..python import data_instances
from ..values.objects import BoolFact


class NumericLimits:
    """What `torch.finfo(dtype)` / `torch.iinfo(dtype)` returns: every attribute is a number."""

    __slots__ = ()


NUMERIC_LIMITS = NumericLimits()


class Device:
    """`x.device`: a torch device, which device the run does not know; a value, never a tensor (a
    cache layer's `self.device = key_states.device` holds no memory the run must count)."""

    __slots__ = ()


DEVICE = Device()
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
TENSOR_FUNCTIONS = frozenset({"torch.tensor", "torch.as_tensor"})
_NUMBERS = (ScalarFact, DimFact, IntFact, BoolFact)


def eager_check(interp, args):
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)
    return BoolFact(False)


def is_tensor(interp, args):
    """`torch.is_tensor(obj)` (Python's `isinstance(obj, torch.Tensor)`, data_instances' table):
    decided when the run knows what obj is — a tensor, or None or a value no tensor is (`scale = 1.`
    beside a rotary `freqs`); None for a value it does not know."""
    value = interp.eval(args.get(0, "obj"))
    for extra in [*args.positional[1:], *(v for k, v in args.keywords.items() if k != "obj")]:
        interp.eval(extra)
    decided = data_instances.decide(interp, value, ["torch.Tensor"], [])
    return None if decided is None else BoolFact(decided)


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
    elif type(data) is SequenceFact and not data.items or getattr(data, "runs", None) == [] and \
            getattr(data, "unknown", True) is False:  # `torch.tensor([])` (an empty list): one dim of size 0
        shape, items = (Const(0),), (ScalarFact(),)
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


# torch's legacy constructors: the class called (`torch.Tensor(slopes)`), of the default dtype
# (None) or their own
LEGACY_CONSTRUCTORS = {"torch.Tensor": None, "torch.FloatTensor": "float32", "torch.DoubleTensor": "float64",
                       "torch.LongTensor": "int64", "torch.IntTensor": "int32", "torch.BoolTensor": "bool"}


def legacy_constructor(interp, args, dtype):
    """`torch.Tensor(data)` of a sequence of numbers: a 1-d tensor of them (as `torch.tensor`, in the
    class's dtype); `torch.Tensor(*sizes)` of ints: an uninitialised tensor of those sizes; of a
    tensor, a tensor of its shape. Anything else (nested data, ints in a name, which may be a
`torch.Size`) has no shape read here."""
    values = [interp.eval(value) for value in [*args.positional, *args.keywords.values()]]
    if args.keywords or args.starred:
        return TensorFact(None, dtype, framework="torch")
    if len(values) == 1 and type(values[0]) is TensorFact:
        return TensorFact(values[0].shape, dtype, framework="torch")
    if len(values) == 1 and type(values[0]) is SequenceFact:
        items = values[0].items
        # ints held in a name may be a torch.Size (`torch.Tensor(x.shape)`: sizes, not data)
        data = isinstance(args.positional[0], (cst.List, cst.Tuple)) or any(type(i) is not DimFact for i in items)
        known = data and all(type(item) in _NUMBERS for item in items)
        return TensorFact((Const(len(items)),) if known else None, dtype, framework="torch")
    if values and all(type(value) is DimFact for value in values):
        return TensorFact(tuple(value.dim for value in values), dtype, framework="torch")
    return TensorFact(None, dtype, framework="torch")


def arange(interp, args):
    """`torch.arange(end)`, `torch.arange(start, end, step=1)`, bounds positional or by keyword:
    ceil((end - start) / step) elements, none when that is not positive; int64 unless `dtype`
    says. A bound that is not a known int (a float, an unknown) leaves the length unknown."""
    positional, named = list(args.positional), dict(args.keywords)
    if len(positional) == 1 and "end" not in named:
        positional.insert(0, None)  # `arange(end)` starts at 0
    nodes = [positional[i] if i < len(positional) else named.pop(key, None)
             for i, key in enumerate(("start", "end", "step"))]
    dtype_node = named.pop("dtype", None)
    dtype = interp.eval(dtype_node) if dtype_node is not None else None
    for value in [*positional[3:], *named.values()]:  # device=, requires_grad=
        interp.eval(value)
    start = Const(0) if nodes[0] is None else _int_dim(interp, nodes[0])
    end = None if nodes[1] is None else _literal(nodes[1]) or interp.dim_of(nodes[1])  # dim_of refuses ints < 1
    if end is None and nodes[1] is not None:
        end = _int_dim(interp, nodes[1])  # `-qlen`: a bound below zero (a range counting down)
    whole = None if nodes[2] is None else _whole_float(nodes[2])  # `arange(0, d, 2.0)`
    float_step = whole is not None
    step = 1 if nodes[2] is None else whole if float_step else _known_int(interp, _int_dim(interp, nodes[2]))
    length = None if start is None or end is None or not step else _range_length(start, end, step, interp.ctx.settings.sizes)
    if length is None:
        return TensorFact(None, framework="torch")
    # int64 unless a float bound makes torch's default float dtype (not known here) or `dtype` says
    dtype = dtype.dtype if type(dtype) is DTypeFact else (None if dtype_node is not None or float_step else "int64")
    return TensorFact((length,), dtype, framework="torch")


def _whole_float(node):
    """A float literal step of whole value (`2.0`, `-1.0`) as its int: torch counts ceil((end - start)
    / step) elements, the same for it; None for any other step."""
    negative = type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus
    literal = node.expression if negative else node
    if type(literal) is not cst.Float:
        return None
    value = float(literal.value.replace("_", ""))
    if not value.is_integer():
        return None
    return -int(value) if negative else int(value)


def _literal(node):
    value = int_value(node)
    return None if value is None else Const(value)


def _int_dim(interp, node):
    literal = _literal(node)
    if literal is not None:
        return literal
    fact = interp.eval(node)
    if type(fact) is IntFact:
        return Const(fact.value)
    return fact.dim if type(fact) is DimFact else None


def _known_int(interp, dim):
    return None if dim is None else _span(Const(0), dim, interp.ctx.settings.sizes)[1]


def _span(start, end, sizes):
    """(end - start reduced as a polynomial, its value where the sizes bind it): `(3*p + v) - (2*p + v)`
    is `p`; (None, None) for a dim no polynomial holds (an anonymous `_` from an unpacking) or an
    atom that does not divide exactly."""
    try:
        low, high = Polynomial.from_dim(start), Polynomial.from_dim(end)
        if low is None or high is None:
            return None, None
        span = high - low
        return span, (None if span.unbound(sizes) else span.evaluate(sizes))
    except Exception:  # noqa: BLE001 - not a polynomial of known sizes
        return None, None


def _range_length(start, end, step: int, sizes):
    """len(range(start, end, step)) as a dim: symbolic where the bounds are, a number where it is
    not positive or not a whole number of steps."""
    span, value = _span(start, end, sizes)  # value may be negative: a range counting down, or an empty one
    if span is None and start == Const(0):
        value = _evaluated(end, sizes)
    if value is None:  # unbound: the formula holds only for bounds known to be ordered
        if start != Const(0) or step < 1:
            return None
        return end if step == 1 else simplify_dim(BinOp("//", BinOp("+", end, Const(step - 1)), Const(step)))
    count = -(-value // step)  # ceil(value / step), either sign
    if count <= 0:
        return Const(0)
    if step < 0 or value % step != 0:
        return Const(count)
    length = end if start == Const(0) else span.to_dim()  # kept a formula of the dims
    return length if step == 1 else simplify_dim(BinOp("//", length, Const(step)))


def _evaluated(dim, sizes):
    try:
        value = evaluate_dim(dim, sizes)
    except Exception:  # noqa: BLE001 - unbound, or not a size
        return None
    return value if isinstance(value, int) else None
