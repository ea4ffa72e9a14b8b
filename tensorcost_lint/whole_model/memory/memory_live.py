"""The largest live set of an inference pass (Contract 9: `activations` and `peak` in `mode:
inference`), by a stated liveness model over the run's own records (docs/memory.md, *Inference*).

Under `torch.no_grad` nothing is saved for backward: a tensor lives while something references it,
as CPython's reference counts and torch's CPU allocator (which frees a storage when its last
reference goes) make it. The run records, in forward order:

- `Created(storage)`: an op made the storage (storage.py; a site's output at its SiteEntry);
- `Used(storages)`: an op ran on these storages (its inputs, read when the op's output is made):
  an unnamed intermediate (`self.down(self.act(self.up(x)))`) lives until the op that consumes it
  has run;
- `Held(slot, storages)`: a Python name of a running function (a slot) now holds these storages
  (a tensor, or the tensors of a tuple, list, dict or record it is bound to), and lets go of what it
  held before (`x = x + y` frees the old `x` once the sum exists); a function's return lets go of
  every name it bound, its parameters included (the caller's own reference to an argument ends when
  the call returns, the same moment);
- `LoopEntry(held)`: what each name holds where a loop body starts: a body recorded once stands for
  every iteration, and iteration k+1 reads, under the body's first facts, what iteration k bound.

A storage lives from its `Created` to its last record (the last op that reads it, the last name that
lets it go), or to the end of the forward when the returned value holds it. One count per storage
(views share their source's). Parameters and buffers (storages made before the forward: by the
constructor) are not counted; the entry's inputs are (the caller holds them through the forward).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ...analysis import multihead_attention
from ...analysis.facts import ModuleFact, SelfFact, SequenceFact, TensorFact
from ..values.library_objects import MappingFact, RecordFact
from .held_names import Frame, changed, written_names
from .memory_activations import _CROSS_ENTROPY, _LAYER_NORM, _argument, _cross_entropy, _layer_norm
from ..values.optional_values import MaybeNone
from ..values.strides import product

MAX_REACHED = 10_000  # values visited for one name's storages (bounded work on a hostile object graph)
_READING = frozenset({cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript, cst.Comparison})
# an inference pass runs in eval mode: torch's dropout then returns its input itself (`_dropout_impl`:
# `if (p == 0 || !train ...) return input`), as nn.Identity does: no new storage
_RETURNS_INPUT = frozenset({"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
                            "Identity", "HookPoint"})
# shape-preserving modules (analysis.calls) that allocate their result only: one kernel each
_RESULT_ONLY = frozenset({"GELU", "ReLU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Mish", "LeakyReLU",
                          "ELU", "Hardswish", "SELU", "Softplus", "CELU", "Hardshrink", "Hardtanh", "ReLU6",
                          "LogSigmoid", "Softmin", "Softshrink", "Softsign", "Threshold", "Softmax2d",
                          "GELUActivation", "Swish"})  # transformers' run nn.functional.gelu, silu
# transformers' activations.py written as several ops: tensors like the input live beside the
# input and the result at their last op (NewGELUActivation: `0.5 * x` and `1 + tanh(...)`, evaluated
# left to right; QuickGELU: `sigmoid(1.702 * x)`)
_TEMPORARIES_LIKE_INPUT = {"NewGELUActivation": 2, "QuickGELU": 1}
# functions that allocate statistics or decomposition temporaries beside their result, not in the table
_UNKNOWN_FUNCTIONS = frozenset({"torch.nn.functional.group_norm", "torch.nn.functional.rms_norm",
                                "torch.nn.functional.instance_norm", "torch.nn.functional.normalize"})
_RETURNS_INPUT_FUNCTIONS = frozenset({"torch.nn.functional.dropout", "torch.nn.functional.dropout1d",
                                      "torch.nn.functional.dropout2d", "torch.nn.functional.dropout3d",
                                      "torch.nn.functional.alpha_dropout", "torch.dropout"})


@dataclass(slots=True)
class Used:
    """An op ran on these storages: they are live at least until here."""

    storages: tuple


@dataclass(slots=True)
class Held:
    """The name `slot` of a running function now holds `storages`, and no longer what it held."""

    slot: object
    storages: tuple


@dataclass
class LoopEntry:
    """Where a loop body starts: ((slot, storages), ...) each name holds on the body's first pass."""

    held: tuple


class LiveUnknown(Exception):
    """Why the largest live set cannot be computed exactly."""


def _guarded(method):
    """Tracking what lives must never cost the model its FLOPs: an internal error makes the live set
    unknown (LiveNames.failure), the run goes on."""
    def run(self, *args):
        try:
            return method(self, *args)
        except Exception as error:  # noqa: BLE001
            if self.failure is None:
                self.failure = f"internal error: {type(error).__name__}: {error}"
            return None
    run.__name__, run.__doc__ = method.__name__, method.__doc__
    return run


class LiveNames:
    """The run's hook (run.live): records Used, Held and LoopEntry entries in an inference run."""

    def __init__(self, run) -> None:
        self.run = run
        self.frames: list = []  # a Frame per running function (None while building: nothing recorded)
        self.unknown: list = []  # path:line: ops whose temporaries are not modelled
        self.failure: str | None = None  # why the records are incomplete
        self.inputs: list = []  # the entry's arguments
        self.restated: dict = {}  # id(fact a shape comment made) -> (fact, the storage of the value it restates)
        self.aliases: dict = {}  # id(storage) -> (storage, the storage it is: dropout returns its input)
        self.aliased = 0  # aliases made: a held storage may now be another (held_names reads every name)

    def _active(self) -> bool:
        return self.run.mode == "inference" and not self.run.building

    def storages(self, value, make: bool = False) -> tuple:
        """The storages a value references: a tensor's, and those of the tensors a tuple, list, dict,
        record or plain object of the tree (not a module: its tensors are parameters and buffers)
        holds. A tensor no op has read yet has no storage: none, unless `make` (then a fresh one)."""
        return self._reached(value, make)[0]

    def _reached(self, value, make: bool = False) -> tuple:
        """(the value's storages, whether they may change while the value stays the same object:
        a tensor without a storage yet, a record or plain object changed in place, a cut walk)."""
        found, pending, seen = [], [value], set()
        tracker = self.run.storage
        unstable = False
        while pending and len(seen) < MAX_REACHED:
            item = pending.pop()
            if item is None or id(item) in seen:
                continue
            seen.add(id(item))
            kind = type(item)
            if kind is TensorFact:
                layout = tracker.ensure(item) if make else tracker.layout(item)
                storage = self.canonical(layout.storage) if layout is not None else None
                restated = self.restated.get(id(item))
                if layout is None:
                    unstable = True
                    if restated is not None and restated[0] is item:
                        storage = self.canonical(restated[1])
                if storage is not None and not storage.parameter and storage not in found:
                    found.append(storage)
            elif kind is SequenceFact:
                pending.extend(reversed(item.items))
            elif kind is RecordFact:
                unstable = True
                pending.extend(reversed([f for _, f in item.fields]))
            elif kind is MappingFact:
                pending.extend(reversed([f for _, f in item.items]))
            elif kind is MaybeNone:
                pending.append(item.value)
            elif kind is SelfFact:
                unstable = True
                if item not in self.run.paths and self.run.instance(item) is not None:
                    pending.extend(reversed(list(item.attributes.values())))
        return tuple(found), unstable or bool(pending)

    # -- frames ------------------------------------------------------------------------------------
    def enter(self, env: dict) -> None:
        """A function starts: its parameters are names it holds."""
        if not self._active():
            self.frames.append(None)
            return
        if not self.frames:  # the entry: the caller holds its inputs through the forward
            self.inputs = list(env.values())
        self.frames.append(Frame())
        self.settle(env)

    def leave(self) -> None:
        """A function returns: every name it bound lets go."""
        frame = self.frames.pop() if self.frames else None
        if frame is None:
            return
        for name, held in frame.holding.items():
            if held:
                self.run.add(Held((frame, name), ()))

    @_guarded
    def settle(self, env: dict, statement=None, whole: bool = False) -> None:
        """After a statement: each name whose storages changed holds the new ones. Only the names
        the statement can rebind are read again (held_names.py), unless `whole` (a block's first
        statement: its header may have bound names) or that cannot be told."""
        frame = self.frames[-1] if self.frames else None
        if frame is None or not self._active():
            return
        if statement is not None:
            self._restated(env, statement)
        holding = frame.holding
        version = (self.run.storage.version, self.aliased)
        names = written_names(statement) if not whole and env is frame.env and version == frame.version else None
        found = changed(frame, env, names, self._reached) if names is not None else None
        if found is not None:
            for name, now in found:
                holding[name] = now
                self.run.add(Held((frame, name), now))
            return
        frame.forget()
        frame.env, frame.version = env, version
        for name, value in env.items():
            if name.startswith("\0"):
                continue
            now, unstable = self._reached(value)
            frame.values[name] = value
            frame.order[name] = len(frame.order)
            if unstable:
                frame.volatile.add(name)
            if holding.get(name, ()) != now:
                holding[name] = now
                self.run.add(Held((frame, name), now))
        for name in [n for n, held in holding.items() if held and n not in env]:  # `del x`
            holding[name] = ()
            self.run.add(Held((frame, name), ()))

    def _restated(self, env: dict, statement) -> None:
        """`k = k.view(...).transpose(1, 2)  # (B, nh, T, hs)`: the shape comment's fact replaces the
        value's (storage.py gives it a fresh storage at its first use), yet torch binds the value
        itself: the comment's tensor is the value's storage."""
        body = getattr(statement, "body", None)
        if not isinstance(body, (list, tuple)) or len(body) != 1 or not isinstance(body[0], cst.Assign):
            return
        assign = body[0]
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return
        fact = env.get(assign.targets[0].target.value)
        tracker = self.run.storage
        if type(fact) is not TensorFact or tracker.layout(fact) is not None:
            return
        value = tracker.seen.get(id(assign.value))
        layout = tracker.layout(value) if type(value) is TensorFact else None
        if layout is not None:
            self.restated[id(fact)] = (fact, layout.storage)

    def settle_restated(self) -> None:
        """Once the run is done: the storage each restated tensor was given is its value's."""
        for fact, storage in self.restated.values():
            layout = self.run.storage.layout(fact)
            if layout is not None and layout.storage is not storage and (
                    layout.storage.numel is None or storage.numel is None or layout.storage.numel <= storage.numel):
                self.alias(layout.storage, storage)

    @_guarded
    def loop_entry(self, env: dict) -> None:
        """A loop body starts (its target bound): what each name holds on its first pass."""
        self.settle(env)
        frame = self.frames[-1] if self.frames else None
        if frame is not None and self._active():
            self.run.add(LoopEntry(tuple(((frame, n), held) for n, held in frame.holding.items() if held)))

    # -- ops ---------------------------------------------------------------------------------------
    def observe(self, interp, node, fact) -> None:
        """An op was evaluated: the storages of the values it read are live until here."""
        # (not isinstance: LibCST's ABCs make it slow, and this runs per expression; most
        # expressions read no op, and return before the guard's frame)
        if type(node) in _READING and self.run.mode == "inference" and not self.run.building:
            self._observe(interp, node, fact)

    @_guarded
    def _observe(self, interp, node, fact) -> None:
        kind = type(node)
        seen = self.run.storage.seen
        if kind is cst.Call and type(fact) is TensorFact and self._returns_input(interp, node, fact):
            return
        if kind is cst.Call:
            children = [a.value for a in node.args]
            if type(node.func) is cst.Attribute:
                children.append(node.func.value)
        elif kind is cst.BinaryOperation:
            children = [node.left, node.right]
        elif kind is cst.UnaryOperation:
            children = [node.expression]
        elif kind is cst.Subscript:
            children = [node.value, *(e.slice.value for e in node.slice if isinstance(e.slice, cst.Index))]
        else:
            children = [node.left, *(c.comparator for c in node.comparisons)]
        storages = []
        for child in children:
            value = seen.get(id(child))
            if type(value) in (TensorFact, SequenceFact):
                for storage in self.storages(value):
                    if storage not in storages:
                        storages.append(storage)
        if kind is cst.Call:
            made = self._temporaries(interp, node, fact)
            if isinstance(made, str):
                line = interp.ctx.position(node)[0]
                self.unknown.append(f"{interp.ctx.settings.path}:{line}: {made}")
            else:
                storages.extend(s for s in made if s not in storages)
        if storages:
            self.run.add(Used(tuple(storages)))

    def _temporaries(self, interp, node: cst.Call, fact):
        """The storages an op allocates besides its result, live while it runs (each a new
        `Created`), or why they are not known: layer norm's mean and reciprocal deviation per row
        (native_layer_norm's other outputs, in the input's dtype), cross entropy's log-softmax (like
        the logits) and nll_loss's total weight (0-dim, like the logits)."""
        tracker = self.run.storage
        seen = tracker.seen
        callee = seen.get(id(node.func))
        args = [seen.get(id(a.value)) for a in node.args if a.keyword is None and a.star == ""]
        keywords = {a.keyword.value: seen.get(id(a.value)) for a in node.args if a.keyword is not None}
        if type(callee) is ModuleFact:
            return self._module_temporaries(callee, args[0] if args else None)
        if callee is not None and type(callee) is not TensorFact:
            return ()  # code of the tree: its own ops are recorded
        name = interp.ctx.settings.imports.resolve(node.func)
        if name == _LAYER_NORM:
            shape_node = _argument(node, 1, "normalized_shape")
            shape = interp.eval(shape_node) if shape_node is not None else None
            return _layer_norm(tracker, args[0] if args else keywords.get("input"), shape)
        if name == _CROSS_ENTROPY:
            made = _cross_entropy(tracker, args, keywords)
            if isinstance(made, str) or type(fact) is TensorFact:
                return made if isinstance(made, str) else (made[0], made[-1])
            reduction = _argument(node, 6, "reduction")  # a loss the run holds no tensor for: 0-dim when reduced
            if reduction is not None and not (isinstance(reduction, cst.SimpleString)
                                              and reduction.evaluated_value in ("mean", "sum")):
                return "cross entropy with a reduction the run does not know"
            return made[0], made[-1], tracker.copy_storage(1, made[0].dtype)
        if name in _UNKNOWN_FUNCTIONS:
            return f"{name} (the statistics it allocates while it runs are not modelled)"
        return ()

    def _module_temporaries(self, module, x):
        """What a torch module (or one torch's name for it stands for) allocates besides its result."""
        run, tracker = self.run, self.run.storage
        kind = run.parameters.classes.get(id(module))
        if module.kind == multihead_attention.KIND:  # torch's path (fused or not) decides what it holds
            return "nn.MultiheadAttention (the projections and scores it holds while it runs are not modelled)"
        if kind == "LayerNorm":
            rank = run.parameters.norm_rank.get(id(module))
            if rank is None:
                return "nn.LayerNorm over a normalized_shape that is not known"
            return _layer_norm(tracker, x, SequenceFact((None,) * rank))
        if kind in _TEMPORARIES_LIKE_INPUT:
            layout = tracker.ensure(x) if type(x) is TensorFact else None
            if layout is None or layout.sizes is None:
                return f"{kind} of a tensor of unknown size"
            return tuple(tracker.copy_storage(product(layout.sizes), x.dtype) for _ in range(_TEMPORARIES_LIKE_INPUT[kind]))
        if module.kind == "preserve" and kind not in _RESULT_ONLY and kind not in _RETURNS_INPUT:
            return f"nn.{kind} (what it allocates while it runs is not modelled)"
        return ()

    @_guarded
    def applied(self, module, fact, out) -> None:
        """An item of an nn.Sequential applied to `fact` (no call of its own in the source)."""
        if not self._active() or type(out) is not TensorFact or type(fact) is not TensorFact:
            return
        tracker = self.run.storage
        if self.run.parameters.classes.get(id(module)) in _RETURNS_INPUT:
            source, made = tracker.ensure(fact), tracker.ensure(out)
            if source is not None and made is not None:
                self.alias(made.storage, source.storage)
            return
        made = self._module_temporaries(module, fact)
        if isinstance(made, str):
            self.unknown.append(f"{self.run.module or 'the model'}: {made}")
            return
        tracker.ensure(out)
        self.run.add(Used((*self.storages(fact), *made)))

    def _returns_input(self, interp, node: cst.Call, fact) -> bool:
        """A dropout or nn.Identity: its result is its input's storage (the fresh one storage.py
        made for it, the entry just added, is taken back)."""
        tracker = self.run.storage
        callee = tracker.seen.get(id(node.func))
        if type(callee) is ModuleFact:
            if self.run.parameters.classes.get(id(callee)) not in _RETURNS_INPUT:
                return False
        elif interp.ctx.settings.imports.resolve(node.func) not in _RETURNS_INPUT_FUNCTIONS:
            return False
        positional = [a.value for a in node.args if a.keyword is None and a.star == ""]
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        source_node = positional[0] if positional else keywords.get("input")
        source = tracker.layout(tracker.seen.get(id(source_node))) if source_node is not None else None
        made = tracker.layout(fact)
        if source is None or made is None or made.storage is source.storage:
            return False
        self.alias(made.storage, source.storage)
        return True

    def alias(self, made, source) -> None:
        """`made` is `source` itself (kept here, not in the tracker: the retained bytes keep their meaning)."""
        while id(source) in self.aliases:
            source = self.aliases[id(source)][1]
        self.aliases[id(made)] = (made, source)
        self.aliased += 1

    def canonical(self, storage):
        found = self.aliases.get(id(storage))
        return found[1] if found is not None and found[0] is storage else storage
