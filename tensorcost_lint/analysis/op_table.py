"""The op table: one entry per op for everything the analysis knows of it (analysis/op_entry.py:
its names, its shape and dtype rule, whether its result shares its input's storage, what it saves
for its backward, whether its result leaves the autograd graph, whether it only reads metadata),
written by family in op_table_layout.py (views, copies, conversions, joins, constructors, metadata),
op_table_maths.py (elementwise maths, activations, reductions), op_table_selection.py (where,
gathers, scatters, sorts) and op_table_layers.py (dropout, norms, pooling, einops, einx), and
assembled here. The shape rules every reader looks up (`METHODS`, `FUNCTIONS`), the memory layer's
view tables (whole_model/memory/storage.py), the saved-tensor table (whole_model/memory/saved_table.py),
the gradient cuts and metadata reads of a whole-model run (whole_model/python/) and the
supported-ops page are all derived from `OPS`; `tests/analysis/test_op_table.py` holds the table's
invariants, `tests/analysis/test_transfer_tables.py` a row per shape rule and
`tests/whole_model/test_saved_table.py` a row per saved rule, against autograd."""

from __future__ import annotations

from . import op_table_layers, op_table_layout, op_table_maths, op_table_selection
from . import tensor_functions as function_rules
from .op_entry import (  # noqa: F401 (the words of the entries, read by their consumers from here)
    ALIAS, AS_METHOD, BATCH_STATISTICS, BY_COUNT, CONDITION, CONTIGUOUS, EXTREMUM, FRESH, INDEX, INDICES, INPUT,
    INPUT_BUFFER, INPUT_INDEX, INPUT_RESULT, MASK, NOTHING, PIECES, RESHAPE, RESULT, SAME_IF_DTYPE, VIEW, Op)

OPS: tuple[Op, ...] = (*op_table_layout.OPS, *op_table_maths.OPS, *op_table_selection.OPS, *op_table_layers.OPS)

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


# The shape rules, by method and by canonical function name. A function that is a method with its
# input first reads the method's rule here when it is called.
METHODS = {op.method: op.shape for op in OPS if op.method is not None and op.shape is not None}
_FUNCTION_RULES = {
    **{op.name: op.shape for op in OPS if op.method is None and op.shape is not None},
    **{f"torch.{op.name}": _torch_rule(op) for op in OPS if op.method is not None and _torch_rule(op) is not None},
}
_NUMBER_FIRST = frozenset(f"torch.{op.name}" for op in OPS if op.number_first)
FUNCTIONS = {name: function_rules.as_method(rule, METHODS, name in _NUMBER_FIRST) if isinstance(rule, str) else rule
             for name, rule in _FUNCTION_RULES.items()}


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
GRADIENT_CUT_FUNCTIONS = frozenset(op.name for op in OPS if op.cuts_gradient and op.method is None)
CONSTRUCTORS = frozenset(op.name for op in OPS if op.constructor)
METADATA_METHODS = frozenset(op.method for op in OPS if op.metadata and op.method is not None)


def shape_rules(op: Op) -> tuple:
    """(the method's shape rule or None, {function: its shape rule}) of an entry."""
    method = METHODS.get(op.method) if op.method is not None else None
    return method, {f: FUNCTIONS[f] for f in op.functions if f in FUNCTIONS}
