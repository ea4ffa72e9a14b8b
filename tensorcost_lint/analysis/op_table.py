"""One entry per torch op for what the analysis knows of it: its shape and dtype rule, whether its
result shares its input's storage (view kind), what it saves for its backward (saved rule), whether
its result leaves the autograd graph, whether it only reads metadata. The shape rules every reader
looks up (`METHODS`, `FUNCTIONS`), the memory layer's view tables (whole_model/memory/storage.py),
the saved-tensor table (whole_model/memory/saved_table.py), the gradient cuts and metadata reads of
a whole-model run (whole_model/python/) and the supported-ops page are all derived from `OPS`;
`tests/analysis/test_op_table.py` holds the table's invariants and `tests/whole_model/test_saved_table.py`
a row per saved rule, against autograd.

An entry's name is its `Tensor` method, or a function's canonical name when the op has no method
(`torch.cat`); `torch=True` says `torch.NAME(x, ...)` is the same op with the input first. `shape`
references the rule, a transfer function of the rule modules (tensor_methods.py, tensor_functions.py,
pointwise_ops.py, ...; they never import this table); `torch.NAME` reads the method's rule unless
`torch_shape` names its own. Ops with no entry yet keep their rules in `tensor_methods.REMAINING_METHODS`
and `tensor_functions.REMAINING_FUNCTIONS` (and `METHOD_FUNCTIONS`, functions read as a method),
which `METHODS` and `FUNCTIONS` join with the table's.

View kinds (storage.py computes the strides, as torch does):

- VIEW: always a view (`transpose`, `permute`, `unsqueeze`, `expand`, ...);
- RESHAPE: a view where torch can view the sizes, else a copy (`view`, `reshape`, `flatten`);
- SAME_IF_DTYPE: the same storage when the dtype (and device) do not change (`to`, `float`);
- PIECES: each piece a view of the input (`split`, `chunk`);
- ALIAS: the input itself (`detach`, `requires_grad_`); CONTIGUOUS: the input when it is already
  contiguous, else a copy;
- FRESH (every op not listed): a new storage. An in-place method (`add_`) is its receiver's storage
  whatever the table says.

Saved rules (torch 2.x's derivatives.yaml, checked against `grad_fn._saved_*` of the same op),
by storage (a view shares its source's):

- input: the first tensor operand (`x ** p`, GELU, SiLU, `square`, `clamp`, `erf`, `abs`, ...);
- result: the op's result (`exp`, `tanh`, `sigmoid`, ReLU, softmax, `reciprocal`, ...);
- input+result: both (`logsumexp`, `linalg.vector_norm`, `norm`, `amax`, `std`, `max()` of a whole tensor);
- mask: the mask argument, the second operand (`masked_fill`); condition: the first (`torch.where`);
- input+index: the input and the index, the third operand (`gather`); index: the index alone
  (`index_select`, `scatter`); input+buffer: the input and a buffer like it (`logsigmoid`);
- indices: the indices the op returns beside its values (`topk`, `sort`, `max(dim)`);
- batch-statistics: `F.batch_norm`'s input, the running mean and variance it is handed, and the
  mean and inverse deviation it computes per channel (float32; empty outside training);
- nothing: views, copies, concatenation, `+`, `-`, sums, padding, `repeat`, `cumsum`, `flip`, `sign`, ...

`max` and `min` read their arguments: of a whole tensor input+result, along a dim the indices, of
two tensors both; `repeat_interleave` by a number keeps nothing (a tensor of counts is not read).
memory_activations reads this table for every op that is not a contraction, attention, a norm,
cross entropy, an embedding or dropout (those have rules of their own there)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import complex_views, dtype_rules, functional_ops, linear_solves, pointwise_ops, selection_ops
from . import tensor_functions as function_rules, tensor_methods as method_rules
from .pointwise_ops import binary, reduction, unary

# view kinds
FRESH = "fresh"
VIEW = "view"
RESHAPE = "reshape"
SAME_IF_DTYPE = "same-if-dtype"
PIECES = "pieces"
ALIAS = "alias"
CONTIGUOUS = "contiguous"

# saved rules (saved_table.by_rule interprets them)
INPUT = "input"
RESULT = "result"
INPUT_RESULT = "input+result"
MASK = "mask"
CONDITION = "condition"
INPUT_INDEX = "input+index"
INDEX = "index"
NOTHING = "nothing"
INDICES = "indices"
EXTREMUM = "extremum"  # max / min: by their arguments
INPUT_BUFFER = "input+buffer"  # the input and a buffer like it (log-sigmoid's)
BATCH_STATISTICS = "batch-statistics"  # batch norm: the input, the running statistics, a mean and inverse deviation
BY_COUNT = "by-count"  # nothing when repeated a number of times; a tensor of counts is not in the table

# `torch_shape` of an entry whose `torch.NAME(x, ...)` is its method's rule with the input first
AS_METHOD = "as-method"


@dataclass(frozen=True)
class Op:
    name: str  # the Tensor method, or the canonical function name of an op with no method
    torch: bool = False  # `torch.NAME(x, ...)` is this op too
    view: str = FRESH
    saved: str | None = None  # None: what it saves is not known (memory says so, never guesses)
    reads_as: str | None = None  # the op this one is another name of (`swapaxes`: `transpose`)
    cuts_gradient: bool = False  # the method's result needs no gradient whatever it read
    metadata: bool = False  # the method reads only metadata (`x.size(1)`): no gradient flows through it
    # the shape and dtype rule of `name`: a method's (interp, receiver, args) -> fact, a function's
    # (interp, args) -> fact, or for a function the name of the method it is with the input first
    # (`F.softmax`: "softmax"); None: the result's shape is not known
    shape: Callable | str | None = None
    # the rule of `torch.NAME` (with torch=True): AS_METHOD (the method's rule, input first, under
    # the name `reads_as` gives), a function's own rule, or None
    torch_shape: Callable | str | None = AS_METHOD

    @property
    def method(self) -> str | None:
        return None if "." in self.name else self.name

    @property
    def functions(self) -> tuple[str, ...]:
        if "." in self.name:
            return (self.name,)
        return (f"torch.{self.name}",) if self.torch else ()


def _ops(names: str, **known) -> tuple[Op, ...]:
    """Entries that share everything but their name (`torch=True, saved=INPUT` for unary maths)."""
    return tuple(Op(name, **known) for name in names.split())


_F = "torch.nn.functional."
_FLOAT = unary(dtype_rules.float_result)  # float maths: integer and bool inputs give torch's default float

OPS: tuple[Op, ...] = (
    # views: the result shares the input's storage
    Op("transpose", torch=True, view=VIEW, saved=NOTHING, shape=method_rules._transpose),
    Op("swapaxes", torch=True, view=VIEW, saved=NOTHING, reads_as="transpose", shape=method_rules._transpose),
    Op("swapdims", torch=True, view=VIEW, reads_as="transpose", shape=method_rules._transpose),
    Op("t", torch=True, view=VIEW, saved=NOTHING, shape=method_rules._t),
    Op("permute", torch=True, view=VIEW, saved=NOTHING, shape=method_rules._permute),
    Op("unsqueeze", torch=True, view=VIEW, saved=NOTHING, shape=method_rules._unsqueeze),
    Op("squeeze", torch=True, view=VIEW, saved=NOTHING, shape=method_rules._squeeze),
    Op("expand", view=VIEW, saved=NOTHING, shape=method_rules._expand),
    Op("expand_as", view=VIEW, saved=NOTHING, shape=method_rules._like),
    Op("broadcast_to", torch=True, view=VIEW, shape=method_rules._broadcast_to),
    Op("view", view=RESHAPE, saved=NOTHING, shape=method_rules._view),
    Op("reshape", torch=True, view=RESHAPE, saved=NOTHING, shape=method_rules._view, torch_shape=function_rules._reshape),
    Op("flatten", torch=True, view=RESHAPE, saved=NOTHING, shape=method_rules._flatten),
    Op("view_as", view=RESHAPE, saved=NOTHING, shape=method_rules._like),
    Op("reshape_as", view=RESHAPE, saved=NOTHING, shape=method_rules._like),
    Op("unflatten", torch=True, view=RESHAPE, saved=NOTHING),
    Op("split", torch=True, view=PIECES, saved=NOTHING, shape=method_rules._split),
    Op("chunk", torch=True, view=PIECES, saved=NOTHING, shape=method_rules._chunk),
    Op("detach", torch=True, view=ALIAS, saved=NOTHING, cuts_gradient=True, shape=method_rules._same, torch_shape=None),
    Op("requires_grad_", view=ALIAS, shape=method_rules._same),
    Op("contiguous", view=CONTIGUOUS, saved=NOTHING, shape=method_rules._same),
    Op("to", view=SAME_IF_DTYPE, saved=NOTHING, shape=method_rules._to),
    Op("type", view=SAME_IF_DTYPE, saved=NOTHING, shape=method_rules._type),
    Op("type_as", view=SAME_IF_DTYPE, saved=NOTHING, shape=method_rules._type_as),
    *(Op(name, view=SAME_IF_DTYPE, saved=NOTHING, shape=method_rules._dtype_method(name))
      for name in ("float", "half", "double", "bfloat16")),
    *_ops("cpu cuda", view=SAME_IF_DTYPE, shape=method_rules._same),
    # copies and arithmetic that keep nothing for the backward
    Op("unbind", torch=True, saved=NOTHING, shape=method_rules._unbind),
    *_ops("clone neg", torch=True, saved=NOTHING, shape=method_rules._same),
    *_ops("tril triu sign", torch=True, saved=NOTHING, shape=method_rules._same, torch_shape=function_rules.preserve),
    *_ops("flip roll frac", torch=True, saved=NOTHING, shape=pointwise_ops.same),
    Op("narrow", torch=True, saved=NOTHING, shape=pointwise_ops._narrow),
    Op("movedim", torch=True, saved=NOTHING, shape=pointwise_ops._movedim),
    Op("sum", torch=True, saved=NOTHING, shape=reduction(dtype_rules.accumulated, dtype_keyword=True)),
    Op("mean", torch=True, saved=NOTHING, shape=reduction(dtype_rules.same, dtype_keyword=True)),
    *_ops("add sub", torch=True, saved=NOTHING, shape=binary(dtype_rules.same)),
    Op("cumsum", torch=True, saved=NOTHING, shape=unary(dtype_rules.accumulated, 1)),
    Op("repeat", saved=NOTHING, shape=method_rules._repeat),
    # a draw of 0s and 1s with the input's probabilities (drop path's keep mask): its gradient is zero
    Op("bernoulli", torch=True, saved=NOTHING, shape=method_rules._same),
    Op("bernoulli_", saved=NOTHING, shape=method_rules._same),
    *_ops("add_ sub_", saved=NOTHING, shape=method_rules._same),
    Op("torch.view_as_complex", saved=NOTHING, shape=complex_views._view_as_complex),
    Op("torch.view_as_real", saved=NOTHING, shape=complex_views._view_as_real),
    *(Op(f"torch.{name}", saved=NOTHING, shape=function_rules._join("cat")) for name in ("cat", "concat", "concatenate")),
    Op("torch.stack", saved=NOTHING, shape=function_rules._join("stack")),
    Op(_F + "pad", saved=NOTHING, shape=functional_ops._pad),
    # elementwise maths, by what its derivative reads
    Op("square", torch=True, saved=INPUT, shape=unary(dtype_rules.squared)),
    Op("abs", torch=True, saved=INPUT, shape=unary(dtype_rules.real_result)),
    *_ops("erf cos sin log log1p atan asin acos sinh cosh", torch=True, saved=INPUT, shape=_FLOAT),
    Op("clamp", torch=True, saved=INPUT, shape=method_rules._same, torch_shape=function_rules.preserve),
    *_ops("clamp_min clamp_max pow", torch=True, saved=INPUT, shape=binary(dtype_rules.same)),
    Op("clip", torch=True, saved=INPUT),
    Op("var", torch=True, saved=INPUT, shape=reduction(dtype_rules.real_float_result, keepdim_position=2)),
    *_ops("exp tanh sigmoid rsqrt sqrt exp2 reciprocal expm1", torch=True, saved=RESULT, shape=_FLOAT),
    Op("relu", torch=True, saved=RESULT, shape=method_rules._same, torch_shape=function_rules.preserve),
    *_ops("softmax log_softmax", torch=True, saved=RESULT, shape=unary(dtype_rules.same, 1)),
    *(Op(_F + name, saved=INPUT, shape=function_rules.preserve) for name in (
        "gelu", "softplus", "silu", "mish", "elu", "leaky_relu", "relu6", "hardtanh")),
    Op(_F + "glu", saved=INPUT, shape=functional_ops._glu),
    Op(_F + "relu", saved=RESULT, shape=function_rules.preserve),
    *(Op(_F + name, saved=RESULT, shape=name) for name in ("sigmoid", "tanh", "softmax", "log_softmax")),
    Op(_F + "logsigmoid", saved=INPUT_BUFFER, shape=function_rules.preserve),
    Op(_F + "batch_norm", saved=BATCH_STATISTICS, shape=function_rules.preserve),
    # reductions and selections
    Op("logsumexp", torch=True, saved=INPUT_RESULT, shape=reduction(dtype_rules.float_result)),
    Op("norm", torch=True, saved=INPUT_RESULT,
       shape=reduction(dtype_rules.real_float_result, dim_position=1, keepdim_position=2, dtype_keyword=True)),
    *_ops("amax amin", torch=True, saved=INPUT_RESULT, shape=reduction(dtype_rules.same)),
    Op("std", torch=True, saved=INPUT_RESULT, shape=reduction(dtype_rules.real_float_result, keepdim_position=2)),
    # `torch.linalg.vector_norm(x, ord, dim, keepdim, *, dtype)`: after the tensor, `Tensor.norm`'s order
    Op("torch.linalg.vector_norm", saved=INPUT_RESULT, shape="norm"),
    Op("torch.linalg.solve_triangular", saved=INPUT_RESULT, shape=linear_solves._solve_triangular),
    *_ops("max min", torch=True, saved=EXTREMUM, shape=pointwise_ops._extreme),
    Op("topk", torch=True, saved=INDICES, shape=selection_ops._topk),
    Op("sort", torch=True, saved=INDICES, shape=selection_ops._sorted_pair),
    Op("masked_fill", torch=True, saved=MASK, shape=method_rules._same, torch_shape=function_rules.preserve),
    Op("masked_fill_", saved=MASK, shape=method_rules._same),
    Op("torch.where", saved=CONDITION, shape=function_rules._where),
    Op("gather", torch=True, saved=INPUT_INDEX, shape=pointwise_ops._gather),
    Op("index_select", torch=True, saved=INDEX, shape=pointwise_ops._index_select),
    Op("scatter", torch=True, saved=INDEX, shape=pointwise_ops.same),
    Op("scatter_", saved=INDEX, shape=pointwise_ops.same),
    Op("repeat_interleave", torch=True, saved=BY_COUNT, shape=method_rules._repeat_interleave),
    # a new tensor from the receiver's metadata: outside the autograd graph
    *_ops("new_zeros new_ones new_empty", cuts_gradient=True, shape=method_rules._new_tensor(False)),
    Op("new_full", cuts_gradient=True, shape=method_rules._new_tensor(True)),
    Op("new_tensor", cuts_gradient=True),
    # metadata reads
    Op("size", metadata=True, shape=method_rules.size),
    Op("dim", metadata=True, shape=method_rules._rank),
    Op("numel", metadata=True, shape=method_rules._numel),
    Op("get_device", metadata=True),
)

# torch.nn classes that hold no parameter, by what they save
MODULES_SAVED = {"GELU": INPUT, "SiLU": INPUT, "Mish": INPUT, "ELU": INPUT, "LeakyReLU": INPUT, "ReLU6": INPUT,
                 "Hardtanh": INPUT, "ReLU": RESULT, "Tanh": RESULT, "Sigmoid": RESULT, "Softmax": RESULT,
                 "LogSoftmax": RESULT, "Identity": NOTHING,
                 "GELUActivation": INPUT}  # transformers' GELUActivation runs nn.functional.gelu
# tensor attributes that are metadata, like the metadata methods (`x.shape`, `x.device`)
METADATA_ATTRIBUTES = frozenset({"shape", "device", "dtype", "ndim", "is_cuda", "requires_grad", "layout"})


# -- derived: what each consumer reads ----------------------------------------------------------------
def _torch_rule(op: Op):
    """The rule of `torch.NAME` for an entry with a method, or None."""
    if not op.torch or op.torch_shape is None:
        return None
    if op.torch_shape == AS_METHOD:
        return (op.reads_as or op.name) if op.shape is not None else None
    return op.torch_shape


# The shape rules, by method and by canonical function name: the table's, then those of the ops it
# does not list yet (tensor_methods.REMAINING_METHODS, tensor_functions.REMAINING_FUNCTIONS).
# A function that is a method with its input first reads the method's rule here when it is called.
METHODS = {**method_rules.REMAINING_METHODS,
           **{op.method: op.shape for op in OPS if op.method is not None and op.shape is not None}}
_FUNCTION_RULES = {
    **function_rules.METHOD_FUNCTIONS,
    **{op.name: op.shape for op in OPS if op.method is None and op.shape is not None},
    **{f"torch.{op.name}": _torch_rule(op) for op in OPS if op.method is not None and _torch_rule(op) is not None},
}
FUNCTIONS = {**function_rules.REMAINING_FUNCTIONS,
             **{name: function_rules.as_method(rule, METHODS) if isinstance(rule, str) else rule
                for name, rule in _FUNCTION_RULES.items()}}


def methods_of(view: str) -> frozenset[str]:
    """The methods of one view kind."""
    return frozenset(op.method for op in OPS if op.view == view and op.method is not None)


# `torch.NAME(x, ...)` read as the method NAME by the storage tracker: the function forms of the
# ops with a view kind whose result the shape rules know (without a shape there is no tensor to lay out)
VIEW_FUNCTIONS = {function: op.reads_as or op.name for op in OPS if op.view != FRESH
                  for function in op.functions if function in FUNCTIONS}
SAVED_METHODS = {op.method: op.saved for op in OPS if op.saved is not None and op.method is not None}
SAVED_FUNCTIONS = {function: op.saved for op in OPS if op.saved is not None for function in op.functions}
GRADIENT_CUT_METHODS = frozenset(op.method for op in OPS if op.cuts_gradient and op.method is not None)
METADATA_METHODS = frozenset(op.method for op in OPS if op.metadata and op.method is not None)


def shape_rules(op: Op) -> tuple:
    """(the method's shape rule or None, {function: its shape rule}) of an entry."""
    method = METHODS.get(op.method) if op.method is not None else None
    return method, {f: FUNCTIONS[f] for f in op.functions if f in FUNCTIONS}
