"""One entry per torch op for what the analysis knows of it beyond its result's shape: whether its
result shares its input's storage (view kind), what it saves for its backward (saved rule), whether
its result leaves the autograd graph, whether it only reads metadata. The memory layer's view
tables (whole_model/memory/storage.py), the saved-tensor table (whole_model/memory/saved_table.py),
the gradient cuts and metadata reads of a whole-model run (whole_model/python/) and the supported-ops
page are all derived from `OPS`; `tests/analysis/test_op_table.py` holds the table's invariants and
`tests/whole_model/test_saved_table.py` a row per saved rule, against autograd.

An entry's name is its `Tensor` method, or a function's canonical name when the op has no method
(`torch.cat`); `torch=True` says `torch.NAME(x, ...)` is the same op with the input first. The
shape and dtype rule is the entry's name in `tensor_methods.METHODS` / `tensor_functions.FUNCTIONS`
(`shape_rules`).

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
- nothing: views, copies, concatenation, `+`, `-`, sums, padding, `repeat`, `cumsum`, `flip`, `sign`, ...

`max` and `min` read their arguments: of a whole tensor input+result, along a dim the indices, of
two tensors both; `repeat_interleave` by a number keeps nothing (a tensor of counts is not read).
memory_activations reads this table for every op that is not a contraction, attention, a norm,
cross entropy, an embedding or dropout (those have rules of their own there)."""

from __future__ import annotations

from dataclasses import dataclass

from . import tensor_functions, tensor_methods

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
BY_COUNT = "by-count"  # nothing when repeated a number of times; a tensor of counts is not in the table


@dataclass(frozen=True)
class Op:
    name: str  # the Tensor method, or the canonical function name of an op with no method
    torch: bool = False  # `torch.NAME(x, ...)` is this op too
    view: str = FRESH
    saved: str | None = None  # None: what it saves is not known (memory says so, never guesses)
    reads_as: str | None = None  # the op this one is another name of (`swapaxes`: `transpose`)
    cuts_gradient: bool = False  # the method's result needs no gradient whatever it read
    metadata: bool = False  # the method reads only metadata (`x.size(1)`): no gradient flows through it

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

OPS: tuple[Op, ...] = (
    # views: the result shares the input's storage
    Op("transpose", torch=True, view=VIEW, saved=NOTHING),
    Op("swapaxes", torch=True, view=VIEW, saved=NOTHING, reads_as="transpose"),
    Op("swapdims", torch=True, view=VIEW, reads_as="transpose"),
    Op("t", torch=True, view=VIEW, saved=NOTHING),
    Op("permute", torch=True, view=VIEW, saved=NOTHING),
    Op("unsqueeze", torch=True, view=VIEW, saved=NOTHING),
    Op("squeeze", torch=True, view=VIEW, saved=NOTHING),
    Op("expand", view=VIEW, saved=NOTHING),
    Op("expand_as", view=VIEW, saved=NOTHING),
    Op("broadcast_to", torch=True, view=VIEW),
    Op("view", view=RESHAPE, saved=NOTHING),
    Op("reshape", torch=True, view=RESHAPE, saved=NOTHING),
    Op("flatten", torch=True, view=RESHAPE, saved=NOTHING),
    Op("view_as", view=RESHAPE, saved=NOTHING),
    Op("reshape_as", view=RESHAPE, saved=NOTHING),
    Op("unflatten", torch=True, view=RESHAPE, saved=NOTHING),
    Op("split", torch=True, view=PIECES, saved=NOTHING),
    Op("chunk", torch=True, view=PIECES, saved=NOTHING),
    Op("detach", torch=True, view=ALIAS, saved=NOTHING, cuts_gradient=True),
    Op("requires_grad_", view=ALIAS),
    Op("contiguous", view=CONTIGUOUS, saved=NOTHING),
    *_ops("to type type_as float half double bfloat16", view=SAME_IF_DTYPE, saved=NOTHING),
    *_ops("cpu cuda", view=SAME_IF_DTYPE),
    # copies and arithmetic that keep nothing for the backward
    *_ops("unbind clone tril triu flip roll narrow movedim sum mean neg add sub cumsum sign frac", torch=True,
          saved=NOTHING),
    *_ops("repeat add_ sub_", saved=NOTHING),
    *(Op(f"torch.{name}", saved=NOTHING) for name in (
        "view_as_complex", "view_as_real", "cat", "concat", "concatenate", "stack")),
    Op(_F + "pad", saved=NOTHING),
    # elementwise maths, by what its derivative reads
    *_ops("square erf abs cos sin log log1p clamp clamp_min clamp_max clip var atan asin acos sinh cosh pow",
          torch=True, saved=INPUT),
    *_ops("exp tanh sigmoid rsqrt sqrt relu exp2 reciprocal expm1 softmax log_softmax", torch=True, saved=RESULT),
    *(Op(_F + name, saved=INPUT) for name in (
        "gelu", "softplus", "silu", "mish", "elu", "leaky_relu", "relu6", "hardtanh", "glu")),
    *(Op(_F + name, saved=RESULT) for name in ("relu", "sigmoid", "tanh", "softmax", "log_softmax")),
    Op(_F + "logsigmoid", saved=INPUT_BUFFER),
    # reductions and selections
    *_ops("logsumexp norm amax amin std", torch=True, saved=INPUT_RESULT),
    Op("torch.linalg.vector_norm", saved=INPUT_RESULT),
    Op("torch.linalg.solve_triangular", saved=INPUT_RESULT),
    *_ops("max min", torch=True, saved=EXTREMUM),
    *_ops("topk sort", torch=True, saved=INDICES),
    Op("masked_fill", torch=True, saved=MASK), Op("masked_fill_", saved=MASK),
    Op("torch.where", saved=CONDITION),
    Op("gather", torch=True, saved=INPUT_INDEX),
    Op("index_select", torch=True, saved=INDEX),
    Op("scatter", torch=True, saved=INDEX), Op("scatter_", saved=INDEX),
    Op("repeat_interleave", torch=True, saved=BY_COUNT),
    # a new tensor from the receiver's metadata: outside the autograd graph
    *_ops("new_zeros new_ones new_empty new_full new_tensor", cuts_gradient=True),
    # metadata reads
    *_ops("size dim numel get_device", metadata=True),
)

# torch.nn classes that hold no parameter, by what they save
MODULES_SAVED = {"GELU": INPUT, "SiLU": INPUT, "Mish": INPUT, "ELU": INPUT, "LeakyReLU": INPUT, "ReLU6": INPUT,
                 "Hardtanh": INPUT, "ReLU": RESULT, "Tanh": RESULT, "Sigmoid": RESULT, "Softmax": RESULT,
                 "LogSoftmax": RESULT, "Identity": NOTHING,
                 "GELUActivation": INPUT}  # transformers' GELUActivation runs nn.functional.gelu
# tensor attributes that are metadata, like the metadata methods (`x.shape`, `x.device`)
METADATA_ATTRIBUTES = frozenset({"shape", "device", "dtype", "ndim", "is_cuda", "requires_grad", "layout"})


# -- derived: what each consumer reads ----------------------------------------------------------------
def methods_of(view: str) -> frozenset[str]:
    """The methods of one view kind."""
    return frozenset(op.method for op in OPS if op.view == view and op.method is not None)


# `torch.NAME(x, ...)` read as the method NAME by the storage tracker: the function forms of the
# ops with a view kind whose result the shape rules know (without a shape there is no tensor to lay out)
VIEW_FUNCTIONS = {function: op.reads_as or op.name for op in OPS if op.view != FRESH
                  for function in op.functions if function in tensor_functions.FUNCTIONS}
SAVED_METHODS = {op.method: op.saved for op in OPS if op.saved is not None and op.method is not None}
SAVED_FUNCTIONS = {function: op.saved for op in OPS if op.saved is not None for function in op.functions}
GRADIENT_CUT_METHODS = frozenset(op.method for op in OPS if op.cuts_gradient and op.method is not None)
METADATA_METHODS = frozenset(op.method for op in OPS if op.metadata and op.method is not None)


def shape_rules(op: Op) -> tuple:
    """(the method's shape rule or None, {function: its shape rule}) of an entry."""
    method = tensor_methods.METHODS.get(op.method) if op.method is not None else None
    return method, {f: tensor_functions.FUNCTIONS[f] for f in op.functions if f in tensor_functions.FUNCTIONS}
