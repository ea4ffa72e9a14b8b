"""`nn.ParameterList` and `nn.ParameterDict` as the run builds them: a list (or a dict of string
keys) of the tensors given, each a parameter — torch wraps a plain tensor in `nn.Parameter` — so
indexing, iteration, `len` and `zip` read them as a list or a dict does, and the model's parameter
count (memory_parameters) counts each of them under `name.index` / `name.key`, as
`model.named_parameters()` names them."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import SequenceFact, TensorFact
from ..python import python_values
from ..python.known_values import int_fact, int_of, range_argument
from ..values.library_objects import MappingFact
from ..values.objects import ModuleList
from ..values.unrolled_loops import MAX_UNROLLED

CONTAINERS = frozenset({"ParameterList", "ParameterDict"})


def build(interp, last: str, args):
    """The list or dict `torch.nn.<last>(values)` builds; an empty one that `append` / item
    assignment fills when no values are given; None (unknown) when the values are not known, and
    then the model's parameter count says so (never a silent short count)."""
    built = _built(interp, last, args)
    if built is None:
        interp.run.parameters.unread.append(f"the values of an nn.{last} are not known item by item")
    return built


def _built(interp, last: str, args):
    run = interp.run
    node = args.get(0, "values" if last == "ParameterList" else "parameters")
    if node is None:
        return python_values.GrowingList(len(run.loop_counts)) if last == "ParameterList" else MappingFact(())
    value = _unrolled(interp, node) if last == "ParameterList" else None
    if value is None:
        value = interp.eval(node)
    if last == "ParameterDict":
        if type(value) is not MappingFact:
            return None
        for _, item in value.items:
            _parameter(run, item)
        return value
    if type(value) is python_values.GrowingList:
        if value.unknown:
            return None
        for item, _ in value.runs:
            _parameter(run, item)
        return python_values.GrowingList(len(run.loop_counts), list(value.runs), False)  # a copy, as torch's list is
    if type(value) is not SequenceFact:
        return None
    for item in value.items:
        _parameter(run, item)
    return SequenceFact(tuple(value.items), kind="list")


def _unrolled(interp, node):
    """`[nn.Parameter(torch.randn(d, d)) for _ in range(n)]` with n known (up to MAX_UNROLLED): n
    tensors, each its own parameter, the element evaluated once per index as Python does (a list
    of tensors made alike has no repeated reading: each copy is its own storage and gradient)."""
    if type(node) not in (cst.ListComp, cst.GeneratorExp) or type(node.for_in.target) is not cst.Name:
        return None
    argument = range_argument(interp, node)
    count = int_of(interp.run, interp.eval(argument)) if argument is not None else None
    if count is None or not 0 <= count <= MAX_UNROLLED:
        return None
    name = node.for_in.target.value
    return SequenceFact(tuple(interp.with_env({**interp.env, name: int_fact(i)}).eval(node.elt)
                              for i in range(count)), kind="list")


def _parameter(run, item) -> None:
    if type(item) is TensorFact:  # a plain tensor given is wrapped in nn.Parameter: it needs a gradient
        run.mark(item)
        run.storage.mark_parameter(item)


def items(value):
    """((key, tensor, count), ...) of a list or dict attribute's tensor items (count: a DimExpr or
    1); None for a list grown by appends the run could not follow."""
    if type(value) is SequenceFact:
        return tuple((str(i), item, 1) for i, item in enumerate(value.items) if type(item) is TensorFact)
    if type(value) is MappingFact:
        return tuple((str(key), item, 1) for key, item in value.items if type(item) is TensorFact)
    if type(value) is python_values.GrowingList:
        if value.unknown:
            return None
        return tuple((str(i), item, count) for i, (item, count) in enumerate(value.runs) if type(item) is TensorFact)
    if type(value) is ModuleList:  # a list filled by `append` once its constructor ran, as the run keeps one
        if value.count is not None:
            return (("0", value.items[0], value.count),) if value.items and type(value.items[0]) is TensorFact else ()
        return tuple((str(i), item, 1) for i, item in enumerate(value.items) if type(item) is TensorFact)
    return ()
