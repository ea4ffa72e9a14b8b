"""What each torch op saves for its backward, as torch 2.x's derivatives.yaml says (checked against
`grad_fn._saved_*` of the same op in tests/whole_model/test_saved_table.py, one row per entry): the
one table memory_activations reads for every op that is not a contraction, attention, a norm, cross
entropy, an embedding or dropout (those have rules of their own there).

A rule names what is kept, by storage (a view shares its source's):

- input: the first tensor operand (`x ** p`, GELU, SiLU, `square`, `clamp`, `erf`, `abs`, ...);
- result: the op's result (`exp`, `tanh`, `sigmoid`, ReLU, softmax, `reciprocal`, ...);
- input+result: both (`logsumexp`, `linalg.vector_norm`, `norm`, `amax`, `std`, `max()` of a whole tensor);
- mask: the mask argument, the second operand (`masked_fill`); condition: the first (`torch.where`);
- input+index: the input and the index, the third operand (`gather`); index: the index alone
  (`index_select`, `scatter`); input+buffer: the input and a buffer like it (`logsigmoid`);
- indices: the indices the op returns beside its values (`topk`, `sort`, `max(dim)`);
- nothing: views, copies, concatenation, `+`, `-`, sums, padding, `repeat`, `cumsum`, `flip`, `sign`, ...

`max` and `min` read their arguments: of a whole tensor input+result, along a dim the indices, of
two tensors both; `repeat_interleave` by a number keeps nothing (a tensor of counts is not read)."""

from __future__ import annotations

from ...analysis.facts import DimFact, IntFact, ScalarFact, TensorFact
from .index_memory import returned_indices
from ..values.strides import product

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

_UNARY_INPUT = ("square", "erf", "abs", "cos", "sin", "log", "log1p", "clamp", "clamp_min", "clamp_max", "clip",
                "var", "atan", "asin", "acos", "sinh", "cosh")
_UNARY_RESULT = ("exp", "tanh", "sigmoid", "rsqrt", "sqrt", "relu", "exp2", "reciprocal", "expm1")
_VIEWS_AND_COPIES = ("view", "reshape", "transpose", "permute", "contiguous", "unsqueeze", "squeeze", "expand",
                     "expand_as", "flatten", "split", "chunk", "unbind", "float", "half", "bfloat16", "double", "to",
                     "type_as", "type", "t", "clone", "view_as", "reshape_as", "swapaxes", "unflatten", "detach",
                     "repeat", "tril", "triu", "flip", "roll", "narrow", "movedim")
_NO_SAVE_MATH = ("sum", "mean", "neg", "add", "sub", "cumsum", "add_", "sub_", "sign", "frac")
# the torch functions among them (the rest are methods only)
_NO_SAVE_FUNCTIONS = ("transpose", "permute", "unsqueeze", "squeeze", "flatten", "reshape", "split", "chunk", "unbind",
                      "clone", "t", "swapaxes", "movedim", "narrow", "tril", "triu", "flip", "roll", "detach",
                      "unflatten", "view_as_complex", "view_as_real", "sum", "mean", "neg", "add", "sub", "cumsum",
                      "sign", "frac",
                      "cat", "concat", "concatenate", "stack")

FUNCTIONS = {
    **{f"torch.{name}": INPUT for name in _UNARY_INPUT},
    **{f"torch.{name}": RESULT for name in _UNARY_RESULT},
    **{f"torch.{name}": NOTHING for name in _NO_SAVE_FUNCTIONS},
    "torch.pow": INPUT, "torch.softmax": RESULT, "torch.log_softmax": RESULT,
    "torch.logsumexp": INPUT_RESULT, "torch.linalg.vector_norm": INPUT_RESULT, "torch.norm": INPUT_RESULT,
    "torch.amax": INPUT_RESULT, "torch.amin": INPUT_RESULT, "torch.std": INPUT_RESULT,
    "torch.max": EXTREMUM, "torch.min": EXTREMUM,
    "torch.masked_fill": MASK, "torch.where": CONDITION, "torch.gather": INPUT_INDEX, "torch.index_select": INDEX,
    "torch.scatter": INDEX, "torch.linalg.solve_triangular": INPUT_RESULT, "torch.repeat_interleave": BY_COUNT,
    "torch.nn.functional.logsigmoid": INPUT_BUFFER,
    "torch.topk": INDICES, "torch.sort": INDICES,
    "torch.nn.functional.gelu": INPUT, "torch.nn.functional.softplus": INPUT, "torch.nn.functional.silu": INPUT,
    "torch.nn.functional.mish": INPUT, "torch.nn.functional.elu": INPUT, "torch.nn.functional.leaky_relu": INPUT,
    "torch.nn.functional.relu6": INPUT, "torch.nn.functional.hardtanh": INPUT, "torch.nn.functional.glu": INPUT,
    "torch.nn.functional.relu": RESULT, "torch.nn.functional.sigmoid": RESULT, "torch.nn.functional.tanh": RESULT,
    "torch.nn.functional.softmax": RESULT, "torch.nn.functional.log_softmax": RESULT,
    "torch.nn.functional.pad": NOTHING,
}
METHODS = {
    **dict.fromkeys(_UNARY_INPUT, INPUT), **dict.fromkeys(_UNARY_RESULT, RESULT),
    **dict.fromkeys((*_VIEWS_AND_COPIES, *_NO_SAVE_MATH), NOTHING),
    "pow": INPUT, "softmax": RESULT, "log_softmax": RESULT,
    "logsumexp": INPUT_RESULT, "norm": INPUT_RESULT, "amax": INPUT_RESULT, "amin": INPUT_RESULT, "std": INPUT_RESULT,
    "max": EXTREMUM, "min": EXTREMUM,
    "masked_fill": MASK, "masked_fill_": MASK, "gather": INPUT_INDEX, "index_select": INDEX,
    "scatter": INDEX, "scatter_": INDEX, "repeat_interleave": BY_COUNT,
    "topk": INDICES, "sort": INDICES,
}
# torch.nn classes that hold no parameter, by what they save
MODULES = {"GELU": INPUT, "SiLU": INPUT, "Mish": INPUT, "ELU": INPUT, "LeakyReLU": INPUT, "ReLU6": INPUT,
           "Hardtanh": INPUT, "ReLU": RESULT, "Tanh": RESULT, "Sigmoid": RESULT, "Softmax": RESULT,
           "LogSoftmax": RESULT, "Identity": NOTHING,
           "GELUActivation": INPUT}  # transformers' GELUActivation runs nn.functional.gelu


def storages(tracker, facts) -> tuple:
    found = []
    for fact in facts:
        layout = tracker.ensure(fact) if type(fact) is TensorFact else None
        if layout is not None:
            found.append(layout.storage)
    return tuple(found)


def by_rule(tracker, what: str, args, out, result=None, keywords=None):
    """The storages the rule `what` keeps, for operands `args` (a method's receiver first) and
    result `out` (`result`: the call's whole value: a (values, indices) pair); a str says why not
    known."""
    keywords = keywords or {}
    if what == NOTHING:
        return ()
    if what == INDICES:
        return returned_indices(tracker, result)
    if what == RESULT:
        return storages(tracker, [out])
    if what == INPUT_RESULT:
        return storages(tracker, [*[a for a in args if type(a) is TensorFact][:1], out])
    if what == EXTREMUM:
        return _extremum(tracker, args, out, result, keywords)
    if what == BY_COUNT:
        if any(type(a) is TensorFact for a in (*args[1:], *keywords.values())):
            return "repeat_interleave by a tensor of counts (what it saves is not in the table)"
        return ()
    if what == INPUT_BUFFER:
        first = args[0] if args and type(args[0]) is TensorFact else None
        layout = tracker.ensure(first) if first is not None else None
        if layout is None or layout.sizes is None:
            return "log-sigmoid of a tensor of unknown size"
        return (layout.storage, tracker.copy_storage(product(layout.sizes), first.dtype))
    if what in (MASK, CONDITION, INDEX, INPUT_INDEX):
        position = {MASK: 1, CONDITION: 0, INDEX: 2, INPUT_INDEX: 2}[what]
        name = {MASK: "mask", CONDITION: "condition", INDEX: "index", INPUT_INDEX: "index"}[what]
        operand = args[position] if len(args) > position else keywords.get(name)
        if type(operand) is not TensorFact:
            return f"the {name} of the op is not a tensor the run knows"
        kept = [args[0], operand] if what == INPUT_INDEX else [operand]
        return storages(tracker, kept)
    tensors = [a for a in args if type(a) is TensorFact]
    if what == INPUT and any(type(k) is TensorFact for k in (*tensors[1:], *keywords.values())):
        return "an op with a second tensor operand (what it saves of that is not in the table)"
    return storages(tracker, tensors[:1])


def _extremum(tracker, args, out, result, keywords):
    if len(args) > 1 and type(args[1]) is TensorFact:  # torch.max(a, b): elementwise, keeps both
        return storages(tracker, args[:2])
    if len(args) > 1 and type(args[1]) in (DimFact, IntFact, ScalarFact) or "dim" in keywords:
        return returned_indices(tracker, result)  # along a dim: (values, indices), keeps the indices
    if len(args) > 1 or keywords:
        return "max/min with arguments the table does not read"
    return storages(tracker, [args[0], out])  # of the whole tensor: the input and the 0-dim result
