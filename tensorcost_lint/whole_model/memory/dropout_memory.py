"""What dropout leaves for the backward in training (memory_activations' table): torch returns the
input itself at p = 0 (or out of training), and on CPU multiplies by a noise tensor like the input
otherwise (ATen's `_dropout`: `input * bernoulli(1 - p) / (1 - p)`), which the product saves. CUDA's
fused kernel saves a bool mask instead; the figures here are the CPU kernel's, as MemTracker and
autograd's saved tensors measure them in the tests."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import ScalarFact, TensorFact
from ..library.library_values import ZERO_FLOAT
from ..values.strides import product


def alias(tracker, out, inputs) -> tuple:
    """torch returns the input itself (dropout at p=0, nn.Identity): the result is its storage."""
    source = tracker.ensure(inputs[0]) if inputs and type(inputs[0]) is TensorFact else None
    if source is not None and out is not None:
        tracker._set(out, source)
    return ()


def dropout_saved(run, p, out, args):
    """Training dropout as torch's CPU kernel runs it: p = 0 returns the input; 0 < p < 1 multiplies
    the input by a noise tensor like it (bernoulli(1 - p) / (1 - p)), which the product saves."""
    if p == 0:
        return alias(run.storage, out, args[:1])
    x = args[0] if args else None
    layout = run.storage.ensure(x) if type(x) is TensorFact else None
    if p is None:
        return "dropout with an unknown p (what it saves depends on whether p is 0)"
    if not 0 < p < 1 or layout is None or layout.sizes is None:
        return f"dropout with p = {p:g} or of an input of unknown size"
    return (run.storage.copy_storage(product(layout.sizes), x.dtype),)


def functional_dropout(run, interp, node: cst.Call, out, args):
    """`F.dropout(input, p=0.5, training=True)`: `training=self.training` false is the input."""
    p_node, training = argument(node, 1, "p"), argument(node, 2, "training")
    off = training is not None and run.condition(interp, training) is False
    p = 0 if off else 0.5 if p_node is None else dropout_probability(run, interp, p_node)
    return dropout_saved(run, p, out, args)


def argument(node: cst.Call, position: int, keyword: str):
    """A call's argument by position or keyword, as written (None when absent)."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a.value for a in node.args if a.keyword is None and a.star == ""]
    return positional[position] if position < len(positional) else None


def dropout_probability(run, interp, node):
    """The dropout probability `node` gives when known: a literal, a float the run knows
    (`config.attention_dropout` read from config.json), 0 for a value `assume` (or the dims) makes
    false; else None."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.value.replace("_", ""))
    fact = interp.eval(node)
    if fact is ZERO_FLOAT:
        return 0
    known = run.floats.value(fact) if type(fact) is ScalarFact else None
    if known is not None:
        return known
    return 0 if run.condition(interp, node) is False else None
