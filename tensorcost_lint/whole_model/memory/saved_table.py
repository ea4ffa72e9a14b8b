"""What each torch op saves for its backward, read from the saved rules of analysis/op_table.py
(their meaning, from torch 2.x's derivatives.yaml, is documented there with the table; each entry is
checked against `grad_fn._saved_*` of the same op in tests/whole_model/test_saved_table.py, one row
per entry). `by_rule` turns a rule into the storages an op keeps: memory_activations reads it for
every op that is not a contraction, attention, a norm, cross entropy, an embedding or dropout (those
have rules of their own there)."""

from __future__ import annotations

from ...analysis import op_table
from ...analysis.facts import DimFact, IntFact, ScalarFact, TensorFact
from ..values.objects import NONE, BoolFact
from ...analysis.op_table import (BATCH_STATISTICS, BY_COUNT, CONDITION, EXTREMUM, INDEX, INDICES, INPUT,
                                  INPUT_BUFFER, INPUT_INDEX, INPUT_RESULT, MASK, NOTHING, RESULT)
from .index_memory import returned_indices
from ..values.strides import product

FUNCTIONS = op_table.SAVED_FUNCTIONS
METHODS = op_table.SAVED_METHODS
MODULES = op_table.MODULES_SAVED


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
    if what == BATCH_STATISTICS:
        return _batch_statistics(tracker, args, keywords)
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


_BATCH_NORM = ("input", "running_mean", "running_var", "weight", "bias", "training")


def _batch_statistics(tracker, args, keywords):
    """`F.batch_norm(input, running_mean, running_var, weight, bias, training, ...)`: the input, the
    running statistics handed to it (buffers, or None), and its mean and inverse deviation per channel
    (float32 for the float types, nothing outside training); the weight is a parameter."""
    given = dict(zip(_BATCH_NORM, args))
    given.update({k: v for k, v in keywords.items() if k in _BATCH_NORM})
    first, training = given.get("input"), given.get("training", BoolFact(False))
    layout = tracker.ensure(first) if type(first) is TensorFact else None
    if layout is None or layout.sizes is None or len(layout.sizes) < 2:
        return "batch norm of a tensor of unknown size"
    if type(training) is not BoolFact:
        return "batch norm whose `training` flag is not known"
    running = [given.get(name, NONE) for name in ("running_mean", "running_var")]
    if any(r is not NONE and type(r) is not TensorFact for r in running):
        return "batch norm whose running statistics are not known"
    channels = layout.sizes[1] if training.value else 0
    statistics = "float64" if first.dtype == "float64" else "float32"
    return (layout.storage, *storages(tracker, running),
            tracker.copy_storage(channels, statistics), tracker.copy_storage(channels, statistics))
