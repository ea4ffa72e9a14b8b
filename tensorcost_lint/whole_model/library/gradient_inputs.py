"""What a backward node of an op other than a contraction makes (memory_activations.OpSaved's
liveness fields, read by memory_peak): the storage of its result, whose gradient flows into it, and
the operands it makes a gradient for."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import TensorFact
from ..values.strides import product


def layout_storage(tracker, fact):
    layout = tracker.layout(fact) if type(fact) is TensorFact else None
    return None if layout is None else layout.storage


def gradient_inputs(run, node) -> tuple:
    """(elements, dtype) of each tensor operand of `node` that needs a gradient and is no parameter:
    the gradients the op's backward allocates (elements None when a size is not known)."""
    facts = run.storage.seen
    if isinstance(node, cst.BinaryOperation):
        operands = [node.left, node.right]
    elif isinstance(node, cst.UnaryOperation):
        operands = [node.expression]
    elif isinstance(node, cst.Subscript):
        operands = [node.value]
    elif isinstance(node, cst.AugAssign):
        operands = [node.target, node.value]
    else:
        operands = [a.value for a in node.args]
        if isinstance(node.func, cst.Attribute):
            operands.insert(0, node.func.value)
    return operand_gradients(run, [facts.get(id(operand)) for operand in operands])


def operand_gradients(run, operands) -> tuple:
    """(elements, dtype) of each operand fact that is a tensor needing a gradient and no parameter,
    once each (gradient_inputs of an op's node; a module nn.Sequential runs has its input alone)."""
    found, seen = [], set()
    for fact in operands:
        if type(fact) is not TensorFact or id(fact) in seen or not run.needs_grad(fact):
            continue
        seen.add(id(fact))
        layout = run.storage.layout(fact)
        if layout is not None and layout.storage.parameter:
            continue  # its gradient is the parameter's (memory_peak counts those per module)
        found.append((None if layout is None or layout.sizes is None else product(layout.sizes), fact.dtype))
    return tuple(found)
