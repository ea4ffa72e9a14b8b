"""One entry of the op table (analysis/op_table.py assembles the entries of its family modules,
op_table_*.py) and the words its fields are written in: view kinds and saved rules.

An entry's name is its `Tensor` method, or a function's canonical name when the op has no method
(`torch.cat`, `numpy.reshape`, `einops.rearrange`); `torch=True` says `torch.NAME(x, ...)` is the
same op with the input first. `shape` references the rule, a transfer function of the rule modules
(tensor_methods.py, tensor_functions.py, pointwise_ops.py, ...; they never import the table), whose
factories carry the dtype rule (`unary(dtype_rules.float_result)`); `torch.NAME` reads the method's
rule unless `torch_shape` names its own. An entry of numpy, jax, einops or einx has no view kind or
saved rule: the memory layer reads torch's ops.

View kinds (whole_model/memory/storage.py computes the strides, as torch does):

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
- batch-statistics: `F.batch_norm`'s input, the running mean and variance it is handed, and the
  mean and inverse deviation it computes per channel (float32; empty outside training);
- indices: the indices the op returns beside its values (`topk`, `sort`, `max(dim)`);
- nothing: views, copies, concatenation, `+`, `-`, sums, padding, `repeat`, `cumsum`, `flip`, `sign`, ...

`max` and `min` read their arguments: of a whole tensor input+result, along a dim the indices, of
two tensors both; `repeat_interleave` by a number keeps nothing (a tensor of counts is not read).
memory_activations reads the saved rules for every op that is not a contraction, attention, a norm,
cross entropy, an embedding or dropout (those have rules of their own there). An entry with no
saved rule (`saved=None`) is an op whose saved tensors are not known: memory says so, never guesses."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

# view kinds
FRESH = "fresh"
VIEW = "view"
RESHAPE = "reshape"
SAME_IF_DTYPE = "same-if-dtype"
PIECES = "pieces"
ALIAS = "alias"
CONTIGUOUS = "contiguous"

# saved rules (whole_model/memory/saved_table.by_rule interprets them)
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
BATCH_STATISTICS = "batch-statistics"  # batch norm: the input, the running statistics, a mean and inverse deviation

NN_FUNCTIONAL = "torch.nn.functional."  # the prefix of F.NAME's canonical name

# `torch_shape` of an entry whose `torch.NAME(x, ...)` is its method's rule with the input first
AS_METHOD = "as-method"


@dataclass(frozen=True)
class Op:
    name: str  # the Tensor method, or the canonical function name of an op with no method
    torch: bool = False  # `torch.NAME(x, ...)` is this op too
    view: str = FRESH
    saved: str | None = None  # None: what it saves is not known (memory says so, never guesses)
    reads_as: str | None = None  # the op this one is another name of (`swapaxes`: `transpose`)
    # the result needs no gradient whatever it read (`x.new_zeros`, `torch.zeros_like`); a method
    # entry's `torch.NAME` is not read so (`torch.detach(h)` stays in the graph)
    cuts_gradient: bool = False
    # a function making a new tensor from sizes, values or another's metadata: it runs no model code
    # and records no site, so a comprehension of it only builds data (whole_model.known_iteration)
    constructor: bool = False
    metadata: bool = False  # the method reads only metadata (`x.size(1)`): no gradient flows through it
    # the shape and dtype rule of `name`: a method's (interp, receiver, args) -> fact, a function's
    # (interp, args) -> fact, or for a function the name of the method it is with the input first
    # (`F.softmax`: "softmax"); None: the result's shape is not known
    shape: Callable | str | None = None
    # the rule of `torch.NAME` (with torch=True): AS_METHOD (the method's rule, input first, under
    # the name `reads_as` gives), a function's own rule, or None
    torch_shape: Callable | str | None = AS_METHOD
    # `torch.NAME(number, tensor)` is valid too (torch's Scalar-self overload: `torch.pow(2, t)`,
    # `torch.sub(1, t)`), with the shape and dtype of the tensor's op with that number
    number_first: bool = False

    @property
    def method(self) -> str | None:
        return None if "." in self.name else self.name

    @property
    def functions(self) -> tuple[str, ...]:
        if "." in self.name:
            return (self.name,)
        return (f"torch.{self.name}",) if self.torch else ()


def ops(names: str | Iterable[str], **known) -> tuple[Op, ...]:
    """Entries that share everything but their name, one per name (a space-separated string or an
    iterable): a group of ops with one rule (`ops("exp tanh sigmoid", torch=True, saved=RESULT, ...)`)."""
    return tuple(Op(name, **known) for name in (names.split() if isinstance(names, str) else names))
