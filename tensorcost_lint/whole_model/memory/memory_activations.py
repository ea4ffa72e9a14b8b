"""What autograd saves for backward at every op that is not a contraction or attention (those are
saved_tensors.py's), as storages; `activations` (Contract 9) is the distinct storages all ops save,
over all executions, at the end of the forward.

The table follows torch's derivatives.yaml (torch 2.x): an op saves only when its result needs a
gradient, and then

- `a * b` saves b when a needs a gradient and a when b does; `a / b` saves b, and a when b needs
  one. A Python number operand is wrapped as a 0-dim tensor (float64, or int64 for an int) and
  saved as such: 8 bytes of its own.
- `x ** p`, `x.pow(p)`, GELU, SiLU: the input; `rsqrt`, `exp`, `tanh`, `sigmoid`, ReLU, softmax and
  log-softmax: the result.
- layer norm: the input, and the mean and reciprocal deviation of each normalised row (float32
  for float32 input, one per row); embedding: the indices; `masked_fill`: the mask; cross entropy:
  the log-softmax (a new storage like the logits), the targets and a total weight (0-dim, like the
  logits).
- advanced indexing: its index tensors; `topk`, `sort`: the indices they return (index_memory).
- `+`, `-`, negation, concatenation, views, copies (`contiguous`, `.to`, `.float()`), reductions
  that keep no input (`sum`, `mean`), dropout at p=0 (torch returns its input): nothing.

An op whose result needs a gradient and that is not in the table makes `activations` unknown,
with the op named: never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ...analysis import multihead_attention
from ...analysis.facts import DimFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, TensorFact
from ..library import pytrees
from ..library.gradient_inputs import gradient_inputs, layout_storage, operand_gradients
from .index_memory import advanced_index_saved, partial_read
from .module_saved import layer_norm_saved as _layer_norm, module_saved, normalized_rank, rms_norm_saved as _rms_norm
from .saved_table import FUNCTIONS, METHODS, by_rule, storages as _storages
from .dropout_memory import argument as _argument, functional_dropout
from .entry_walk import every_entry
from ..values.objects import BoolFact, Embedding, FunctionRef, NoneValue, SiteEntry
from .retention import MAX_WALKED_ENTRIES, _Steps, _Training
from .saved_callees import callee_of
from ..values.strides import product

_LAYER_NORM = "torch.nn.functional.layer_norm"
_CROSS_ENTROPY = "torch.nn.functional.cross_entropy"
_RMS_NORM = "torch.nn.functional.rms_norm"
_IN_PLACE = {cst.MultiplyAssign: "*", cst.DivideAssign: "/"}  # `+=` and `-=` save nothing
_EMBEDDING = "torch.nn.functional.embedding"
# the checkpoint's entries are its own; a pytree function moves values between containers (what
# `tree_map`'s function runs is recorded op by op)
_SKIPPED = frozenset({"torch.utils.checkpoint.checkpoint", *pytrees.FUNCTIONS})


@dataclass
class OpSaved:
    """An op's saved storages (storage.Storage), in the run's order, at the module path it ran in;
    for the backward's liveness (memory_peak): its result's storage, the (elements, dtype) of each
    operand that needs a gradient (the gradients its backward makes), and the elements and dtype of
    what else its backward formula allocates while it runs (cross entropy: nll_loss_backward's
    gradient of the log-softmax, like the logits)."""

    module: str
    storages: tuple
    output: object = None
    inputs: tuple = ()
    temporary: tuple = ()  # ((elements, dtype), ...)
    owner: str | None = None  # the path of the torch module it is the op of (nn.Embedding, a norm)


def _modelled_module(callee) -> bool:
    """A torch module whose call records several sites (analysis/multihead_attention.py)."""
    return type(callee) is ModuleFact and callee.kind == multihead_attention.KIND


@dataclass
class SavedOps:
    """The run's hook: each op's saved storages become an OpSaved entry; ops it cannot read are
    listed (path:line: what) and make the activations unknown."""

    unknown: list = field(default_factory=list)
    applied_outputs: dict = field(default_factory=dict)  # id(result) -> result of a module `applied` recorded
    temporary: tuple = ()  # what the op being read allocates in its backward, set by its rule

    def observe(self, run, interp, node, fact) -> None:
        if run.mode != "training" or run.building or run.no_grad:
            return
        if not isinstance(node, (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript)):
            return
        out = fact if type(fact) is TensorFact else next(
            (i for i in fact.items if type(i) is TensorFact), None) if type(fact) is SequenceFact else None
        if out is None:
            # a result the run cannot describe (a loss, a scalar): what its op saves still counts
            # when a gradient flows through it; a Python bool (`torch.is_tensor(x)`) is no autograd node
            if type(fact) is BoolFact or not (isinstance(node, cst.Call) and _reads_gradient(run, node)):
                return
        elif not run.needs_grad(out) or self.applied_outputs.get(id(out)) is out:
            return  # no gradient; or a module the run applied, recorded there (`getattr(self, name)(x)`)
        try:
            saved = self._saved(run, interp, node, out)
        except Exception as error:  # noqa: BLE001 - counting memory never costs the model its FLOPs
            saved = f"internal error: {type(error).__name__}"
        if isinstance(saved, str):
            self._unknown(interp, node, saved)
        elif saved:
            temporary, self.temporary = self.temporary, ()
            callee = run.storage.seen.get(id(node.func)) if isinstance(node, cst.Call) else None
            owner = run.paths.get(callee) if type(callee) in (ModuleFact, Embedding) else None
            entry = OpSaved(run.module, tuple(saved), layout_storage(run.storage, out),
                            gradient_inputs(run, node), temporary, owner)
            run.add(entry)
            if out is not None:
                run.grad_flow.output(entry, out)  # saved only while the backward can reach `out`
        if isinstance(node, cst.Subscript) and out is not None:
            read = partial_read(run.storage, node, out)
            if read is not None:
                read.module = run.module
                _record(run, read, out)  # its backward runs only when the view's gradient does

    def applied(self, run, interp, node, module, fact, out) -> None:
        """A leaf torch module run with no call of its own in the code (an item of nn.Sequential,
        at the Sequential's call `node`): what it saves, as `module(fact)` would."""
        if run.mode != "training" or run.building or run.no_grad or type(out) is not TensorFact \
                or not run.needs_grad(out):
            return
        try:
            saved, temporary = module_saved(run, module, [fact], out)
        except Exception as error:  # noqa: BLE001 - counting memory never costs the model its FLOPs
            saved, temporary = f"internal error: {type(error).__name__}", ()
        if isinstance(saved, str):
            self._unknown(interp, node, saved)
            return
        if saved:
            _record(run, OpSaved(run.module, tuple(saved), layout_storage(run.storage, out),
                                 operand_gradients(run, [fact]), temporary, run.paths.get(module)), out)
            self.applied_outputs[id(out)] = out

    def augmented(self, run, interp, node, result) -> None:
        """`x *= y`, `x /= y`: torch's in-place mul_/div_ save what `x * y` saves (y, the number
        wrapped), except that where that keeps x it keeps a copy of x as it was: the op overwrites x."""
        op = _IN_PLACE.get(type(node.operator))
        if op is None or run.mode != "training" or run.building or run.no_grad or type(result) is not TensorFact \
                or not run.needs_grad(result):
            return
        tracker = run.storage
        left, right = tracker.seen.get(id(node.target)), tracker.seen.get(id(node.value))
        saved = _binary_facts(run, op, left, right)
        if isinstance(saved, str):
            self._unknown(interp, node, saved)
            return
        old = tracker.layout(left) if type(left) is TensorFact else None
        saved = tuple(tracker.copy_storage(s.numel, s.dtype) if old is not None and s is old.storage else s for s in saved)
        if saved:
            _record(run, OpSaved(run.module, saved, layout_storage(tracker, result), gradient_inputs(run, node)), result)

    def _unknown(self, interp, node, what: str) -> None:
        line = interp.ctx.position(node)[0]
        text = f"{interp.ctx.settings.path}:{line}: {what}"
        if text not in self.unknown:
            self.unknown.append(text)

    def _saved(self, run, interp, node, out):
        tracker = run.storage
        facts = tracker.seen
        self.temporary = ()
        if isinstance(node, cst.Call) and _modelled_module(facts.get(id(node.func))):
            # its sites' operands are not all it saves (the softmax, the dropout mask)
            return "nn.MultiheadAttention (what its attention saves besides its contractions' operands is not in the table)"
        if _site_here(run, node):
            return ()  # a contraction or attention: saved_tensors.py's
        if isinstance(node, cst.BinaryOperation):
            return _binary(run, node, facts.get(id(node.left)), facts.get(id(node.right)))
        if isinstance(node, cst.UnaryOperation):
            return () if isinstance(node.operator, (cst.Minus, cst.Plus)) else "a unary operator"
        if isinstance(node, cst.Subscript):
            return advanced_index_saved(tracker, node)
        found = callee_of(run, interp, node)
        callee, name = found.fact, found.name
        if type(callee) is FunctionRef or type(callee) is SelfFact or callee is not None and type(callee) not in (
                ModuleFact, Embedding, TensorFact):
            return ()  # code of the tree (its own ops are recorded) or a container call
        args = [*found.bound, *(facts.get(id(a.value)) for a in node.args if a.keyword is None and a.star == "")]
        keywords = {**dict(found.bound_keywords),
                    **{a.keyword.value: facts.get(id(a.value)) for a in node.args if a.keyword is not None}}
        if type(callee) is Embedding:
            return _storages(tracker, args[:1])
        if type(callee) is ModuleFact:
            saved, self.temporary = module_saved(run, callee, args, out)
            return saved
        if name in _SKIPPED:
            return ()
        if name == _LAYER_NORM:
            shape_node = _argument(node, 1, "normalized_shape")
            shape = interp.eval(shape_node) if shape_node is not None else None  # `.shape` is not observed
            return _layer_norm(tracker, args[0] if args else keywords.get("input"), shape)
        if name == _CROSS_ENTROPY:
            saved = _cross_entropy(tracker, args, keywords)
            if not isinstance(saved, str):  # nll_loss_backward's gradient of the log-softmax, like it
                self.temporary = ((saved[0].numel, saved[0].dtype),)
            return saved
        if name == _EMBEDDING:
            return _storages(tracker, args[:1])
        if name == "torch.nn.functional.dropout":
            return functional_dropout(run, interp, node, out, args[:1] or [keywords.get("input")])
        if name == _RMS_NORM:
            shape_node = _argument(node, 1, "normalized_shape")
            rank = normalized_rank(interp.eval(shape_node) if shape_node is not None else None)
            if rank is None:
                return "rms norm over a normalized_shape that is not known"
            weight = args[2] if len(args) > 2 else keywords.get("weight")
            return _rms_norm(tracker, args[0] if args else keywords.get("input"), rank,
                             weight is not None and type(weight) is not NoneValue)
        if name is not None and name in FUNCTIONS:
            return by_rule(tracker, FUNCTIONS[name], args, out, facts.get(id(node)), keywords)
        if isinstance(node.func, cst.Attribute) and type(facts.get(id(node.func.value))) is TensorFact:
            method = node.func.attr.value
            receiver = facts.get(id(node.func.value))
            if method in ("mul", "div"):
                return _binary_facts(run, "*" if method == "mul" else "/", receiver, args[0] if args else None)
            if method in METHODS:
                return by_rule(tracker, METHODS[method], [receiver, *args], out, facts.get(id(node)), keywords)
            return f"Tensor.{method} (what it saves is not in tensorcost's table)"
        if name is None:
            return ()  # a call the run did not follow: its cost is listed as not followed
        return f"{name} (what it saves is not in tensorcost's table)"


def _record(run, entry, out) -> None:
    """An entry of what the backward keeps, kept only while the backward can reach `out`."""
    run.add(entry)
    run.grad_flow.output(entry, out)


def _reads_gradient(run, node: cst.Call) -> bool:
    facts = run.storage.seen
    operands = [facts.get(id(a.value)) for a in node.args]
    if isinstance(node.func, cst.Attribute):
        operands.append(facts.get(id(node.func.value)))
    return any(type(f) is TensorFact and run.needs_grad(f) for f in operands)


def _site_here(run, node) -> bool:
    for entry in run.entries[-4:]:
        if type(entry) is SiteEntry and entry.site.span is not None and entry.site.span._node is node:
            return True
    return False


def _wrapped(tracker, value):
    """A Python number in a tensor op: torch wraps it as a 0-dim tensor (8 bytes) and saves that."""
    dtype = "int64" if type(value) is DimFact else "float64"
    return tracker.copy_storage(1, dtype)


def _binary(run, node, left, right):
    operator = node.operator
    if isinstance(operator, (cst.Add, cst.Subtract)):
        return ()
    if isinstance(operator, cst.Multiply):
        return _binary_facts(run, "*", left, right)
    if isinstance(operator, cst.Divide):
        return _binary_facts(run, "/", left, right)
    if isinstance(operator, cst.Power):
        return _storages(run.storage, [left]) if type(left) is TensorFact else "a power with a tensor exponent"
    return f"the operator {type(operator).__name__}"


def _binary_facts(run, op: str, left, right):
    tracker = run.storage
    numbers = (ScalarFact, DimFact)
    if type(left) is not TensorFact and type(right) is not TensorFact:
        return ()
    if type(left) in numbers or type(right) in numbers:
        tensor, number = (left, right) if type(left) is TensorFact else (right, left)
        if op == "/" and tensor is right:
            # torch's `n / t` is `t.reciprocal() * n`: the reciprocal keeps its result, the product the number
            layout = tracker.ensure(tensor)
            if layout is None or layout.sizes is None:
                return "a number divided by a tensor of unknown size"
            return (tracker.copy_storage(product(layout.sizes), tensor.dtype), _wrapped(tracker, number))
        return (_wrapped(tracker, number),)  # the tensor needs the gradient: the number is saved
    if type(left) is not TensorFact or type(right) is not TensorFact:
        return "a tensor op with an operand of unknown kind"
    saved = []
    left_grad, right_grad = run.needs_grad(left), run.needs_grad(right)
    if left_grad:
        saved.append(right)  # d(a*b)/da = b; d(a/b)/da = 1/b
    if right_grad:
        saved.append(left if op == "*" else right)
        if op == "/":
            saved.append(left)
    return _storages(tracker, saved)


def _cross_entropy(tracker, args, keywords):
    logits = args[0] if args else keywords.get("input")
    target = args[1] if len(args) > 1 else keywords.get("target")
    if type(logits) is not TensorFact or type(target) is not TensorFact:
        return "cross entropy of operands of unknown kind"
    layout = tracker.ensure(logits)
    if layout is None or layout.sizes is None:
        return "cross entropy of logits of unknown size"
    log_softmax = tracker.copy_storage(product(layout.sizes), logits.dtype)
    total_weight = tracker.copy_storage(1, logits.dtype)  # nll_loss: `at::empty({}, self.options())`
    return (log_softmax, *_storages(tracker, [target]), total_weight)


# contraction sites whose saved tensors saved_tensors.py takes as their operands as written: torch's
# einsum saves the permuted, reshaped copies it hands to bmm, so these make the activations unknown;
# a convolution keeps its input and weight (saved_tensors._convolution) unless it runs on a copy
_APPROXIMATE_MODELS = frozenset({"contraction", "einsum", "einops", "dot_general"})


def approximate_sites(entries) -> list:
    """Expressions of the einsum-style sites that need a gradient (their saved tensors are approximate)."""
    found = []
    for entry in every_entry(entries):
        if type(entry) is SiteEntry:
            spec = entry.site.spec
            known = spec.operation == "convolution" and len(entry.site.arguments) == 2
            if spec.model in _APPROXIMATE_MODELS and not known and any(entry.grads):
                found.append(entry.site.expression)
    return found


class _AllSaved(_Training):
    """retention's walk of the contractions' saved storages, with every op's added."""

    def work(self, entries) -> int:
        return sum(type(entry) is not OpSaved for entry in entries)  # an op's record: not taken from the budget

    def record(self, entry, executions) -> None:
        if type(entry) is OpSaved and self.saving:
            for storage in entry.storages:
                if storage is not None and not storage.parameter:
                    self.save(storage, executions, entry.module)


def saved_activations(entries, sizes, default_dtype: str):
    """(bytes of every storage autograd saves at the end of the forward, or None; per module path)."""
    walk = _AllSaved(sizes, default_dtype, _Steps(MAX_WALKED_ENTRIES))
    walk.walk(entries)
    return walk.total(), walk.by_module()
