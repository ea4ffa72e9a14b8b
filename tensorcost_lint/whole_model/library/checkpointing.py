"""Activation checkpointing in a whole-model run: `torch.utils.checkpoint.checkpoint(fn, *args)`,
Hugging Face's `self._gradient_checkpointing_func(layer.__call__, *args)` (transformers 4.x, taken
when `assume` decides `self.gradient_checkpointing` true) and layers deriving
`GradientCheckpointingLayer` (transformers 5.x, whose checkpointing wrapper is outside the model's
code: checkpointed in training when `assume` sets `self.gradient_checkpointing: true`).

In training the wrapped call becomes a `Checkpointed` entry: its sites run in the forward and again
in the backward (the totals add the recompute), and autograd keeps only the call's tensor inputs
(retention.py). The recompute is counted whole, as torch does with `use_reentrant=True` (its
default); with `use_reentrant=False` torch stops recomputing once every tensor the block saved is
back, so trailing contractions whose saved tensors are all inputs are not rerun and the count here
is an upper bound (README: Known limits). In inference a checkpointed call is a plain call."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import SelfFact
from ..values.objects import Checkpointed, FunctionRef

CHECKPOINT_FUNCTIONS = frozenset({"torch.utils.checkpoint.checkpoint"})
HF_CHECKPOINT_ATTRIBUTE = "_gradient_checkpointing_func"
HF_LAYER_BASE = "GradientCheckpointingLayer"
ASSUME_KEY = "self.gradient_checkpointing"
# keywords of checkpoint itself; any other keyword goes to the function (non-reentrant form)
_OPTIONS = frozenset({"function", "use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug"})


def is_checkpoint_call(name: str | None, func) -> bool:
    if name in CHECKPOINT_FUNCTIONS:
        return True
    return isinstance(func, cst.Attribute) and func.attr.value == HF_CHECKPOINT_ATTRIBUTE \
        and isinstance(func.value, cst.Name) and func.value.value == "self"


def call_checkpoint(run, interp, node: cst.Call, args):
    fn_node = args.get(0, "function")
    function = _callee(run, interp, fn_node) if fn_node is not None else None
    positional = [interp.eval(value) for value in args.positional[1:]]
    keywords = {}
    for name, value in args.keywords.items():
        if name in _OPTIONS:
            if name != "function":
                interp.eval(value)
        else:
            keywords[name] = interp.eval(value)
    if function is None:
        run.not_followed(interp.ctx, node, "the checkpointed function is not known statically")
        return None
    return run_checkpointed(run, function, positional, keywords, node)


def _callee(run, interp, fn_node):
    """`layer`, `self.block`, `layer.__call__`, `layer.forward` or a function of the tree."""
    if isinstance(fn_node, cst.Attribute) and fn_node.attr.value in ("__call__", "forward"):
        target = interp.eval(fn_node.value)
    else:
        target = interp.eval(fn_node)
    if type(target) is FunctionRef:
        return target
    if type(target) is SelfFact and run.instance(target) is not None:
        return run.method_of(target, "forward")
    return None


def run_checkpointed(run, function, positional, keywords, node):
    if run.mode != "training":
        return run._invoke(function, positional, keywords, node)
    inputs = []
    for fact in [*positional, *keywords.values()]:
        layout = run.storage.ensure(fact)
        if layout is not None and layout.storage not in inputs:
            inputs.append(layout.storage)
    bound = function.bound.self_fact if function.bound is not None else None
    # the inputs are kept for the wrapped module (the layer), where the tree shows them
    entry = Checkpointed(run.paths.get(bound, run.module), tuple(inputs))
    with run.collecting(entry.entries):
        result = run._invoke(function, positional, keywords, node)
    run.add(entry)
    return result


def checkpointed_layer(run, self_fact) -> bool:
    """A transformers 5.x layer (`class LlamaDecoderLayer(GradientCheckpointingLayer)`) with
    checkpointing switched on through `assume`."""
    if run.mode != "training" or not run.assume.get(ASSUME_KEY):
        return False
    instance = run.instance(self_fact)
    if instance is None:
        return False
    for base in instance.cls.bases:
        value = base.value
        name = value.attr.value if isinstance(value, cst.Attribute) else getattr(value, "value", None)
        if name == HF_LAYER_BASE:
            return True
    return False
