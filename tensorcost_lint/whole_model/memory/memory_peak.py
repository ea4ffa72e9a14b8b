"""`peak` and `peak_phase` of a training step (Contract 9): the most the step holds at one moment, by
a stated liveness model over the run's records (docs/memory.md, *Peak*), never a fitted multiplier.

The records are the backward's nodes, in forward order: every contraction or attention site with
an operand that needs a gradient (saved_tensors.SiteMemory) and every other op that saves something
(memory_activations.OpSaved), a loop's body once per iteration, a call's entries once per call.
Throughout the step the parameters, the optimizer's states and the master weights live
(`persistent`). Then

- forward: at its end, every saved storage (`activations`) and what it returns that nothing saved.
- backward: nodes run in reverse forward order (torch's engine on CPU runs the ready node of the
  highest sequence number). While node i runs, live are: every saved storage whose earliest saver
  (in forward order) is at or before i (a storage saved by several nodes lives until the last of
  them has run, one count per storage); the `.grad` of each parameter whose module's last node of
  that copy (the first of the backward) is at or after i — from there to the end of the step
  (zero_grad sets it to None), a tied weight's first gradient held in the engine's buffer meanwhile;
  a parameter no node is placed at counts from the start of the backward; and the node's own
  tensors: the gradient flowing into it (its result's size), the gradients it makes for each
  operand that needs one, and what its formula allocates besides (cross entropy: nll_loss_backward's
  gradient of the log-softmax). Ops that save nothing (`+`, views, copies) pass their gradient on.
  The backward starts from the returned loss, or from the step's sum of the returned tensors, whose
  gradient is an expanded scalar (`_seed_by_sum`); the engine's buffers of tensors read in parts
  live from the first part's backward to their maker's (gradient_buffers).
- optimizer: all gradients (with master weights, the masters' own `.grad`s too: one like each
  master, cast from the parameter's gradient before `step()`), and the temporaries of torch's
  foreach implementation of the step: adam/adamw `_foreach_sqrt(exp_avg_sqs)` (a tensor like each
  `exp_avg_sq`, per dtype group: the previous group's list is still bound while the next one's is
  made); adafactor's per (dtype, matrix-or-vector) group (AdafactorGroup); sgd and sgd-momentum
  update in place (nothing).

Not counted: buffers, allocator rounding and fragmentation, the other gradients in flight between
nodes (a residual stream's gradient waiting in a buffer), copies a backward formula makes of a
non-contiguous operand. Unknown (None with the reason) where the activations are, where a node's
size is not known, under an undecided branch or activation checkpointing, and for optimizers whose
step's temporaries are not in the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .gradient_buffers import GradientBuffers
from .index_memory import PartialRead
from .memory_activations import OpSaved
from ..values.objects import UnrolledPass
from .entry_walk import EntryWalk
from .retention import MAX_WALKED_ENTRIES, _Instances, _itemsize, _nbytes, _resolve, _Steps

_IN_PLACE_STEPS = frozenset({"sgd", "sgd-momentum", "none"})  # foreach updates in place: no temporaries
_SQRT_STEPS = frozenset({"adam", "adamw"})


@dataclass
class AdafactorGroup:
    """The temporaries torch's foreach Adafactor makes for one (dtype, matrix-or-vector) group of
    parameters, in bytes (polynomials until evaluated): `full` — `var_estimates`, one tensor like
    each parameter (`row_var @ col_var` for a matrix, `variance.clone()` for a vector), bound until
    the next group's list replaces it (`updates`); for a matrix group `rows` / `cols` — the
    `torch.norm(grad, dim=-1 / -2, keepdim=True)` lists (deleted before the next), `means` —
    `row_var.mean(dim=-2, keepdim=True)`; for a vector group `squares` — `_foreach_mul(grads, grads)`."""

    matrix: bool
    full: object = 0
    rows: object = 0
    cols: object = 0
    means: object = 0
    squares: object = 0

    def evaluate(self, sizes: dict) -> "AdafactorGroup":
        return AdafactorGroup(self.matrix, *(part if isinstance(part, int) else part.evaluate(sizes)
                                             for part in (self.full, self.rows, self.cols, self.means, self.squares)))

    def live(self, previous: int) -> int:
        """The most this group's step holds at once, with the previous group's `updates` bound."""
        if self.matrix:
            return max(previous + self.rows, previous + self.cols, previous + self.full + self.means)
        return max(previous + self.squares, previous + self.full)


def add_adafactor_tensor(groups: dict, dtype: str, shape: tuple, copies, itemsize: int) -> None:
    """One parameter (`copies` of it) into its group, groups in the order torch makes them: by
    dtype of first appearance, then matrix or vector as first seen (its `tensor.dim() > 1`)."""
    from shape_annotations import Const, Polynomial

    matrix = len(shape) > 1
    group = groups.setdefault((dtype, matrix), AdafactorGroup(matrix))

    def like(dims) -> object:
        return Polynomial.from_dims(tuple(dims)) * copies * itemsize

    group.full = like(shape) + group.full
    if matrix:
        group.rows = like((*shape[:-1], Const(1))) + group.rows
        group.cols = like((*shape[:-2], Const(1), shape[-1])) + group.cols
        group.means = like((*shape[:-2], Const(1), Const(1))) + group.means
    else:
        group.squares = like(shape) + group.squares


class PeakUnknown(Exception):
    """Why the peak cannot be computed exactly."""


@dataclass
class _Node:
    index: int
    module: str
    iteration: tuple  # the loop iterations it ran in (outermost first)
    own: int  # bytes of its own tensors while it runs: gradients in and out, temporaries
    incoming: int  # of which the gradient flowing into it (freed once it has run)
    output: object = None  # the storage of its result


@dataclass
class _Walk(EntryWalk):
    """The backward's nodes in forward order: a loop's iterations each in turn, numbered (the nodes of
    a repeated block's copies told apart by them); an undecided branch's sides in turn, so long as
    neither runs a backward node; no checkpointed call."""

    run: object
    sizes: dict
    default_dtype: str
    steps: _Steps
    instances: _Instances = field(default_factory=_Instances)
    nodes: list = field(default_factory=list)
    first_saver: dict = field(default_factory=dict)  # token -> (storage, index of its earliest saver)
    iteration: tuple = ()
    buffers: GradientBuffers = field(default_factory=GradientBuffers)
    # per list being walked: the iteration it started in, and the start of each unrolled loop in it
    passes: list = field(default_factory=list)

    repeats, choices = "each", "in turn"

    def walk(self, entries, executions=1) -> None:
        self.passes.append((self.iteration, []))
        super().walk(entries, executions)
        outer, _ = self.passes.pop()
        self.iteration = outer

    def created(self, entry, executions) -> None:
        self.instances.created(entry.storage, 1)

    def record(self, entry, executions) -> None:
        kind = type(entry)
        if kind is UnrolledPass:  # an unrolled loop's pass: its position after the enclosing ones
            outer, bases = self.passes[-1]
            if entry.position == 0:
                bases.append(self.iteration)
            if entry.position is None:
                self.iteration = bases.pop() if bases else outer
            elif bases:
                self.iteration = bases[-1] + (entry.position,)
        elif kind is OpSaved:
            self._op(entry)
        elif kind is PartialRead:
            if entry.storages:  # emptied when the backward never reaches the view
                key = (self.instances.token(entry.storages[0]), entry.receiver)
                self.buffers.read(len(self.nodes), key, self._bytes(entry.elements, entry.dtype))

    def unknown_trips(self, entry, executions) -> None:
        # a loop that runs no backward node leaves nothing live, however often it runs
        before = len(self.nodes)
        self.walk(entry.entries, executions)
        if len(self.nodes) != before:
            raise PeakUnknown("a loop's trip count is not known")

    def enter_repeat(self, entry, executions) -> tuple:
        return self.iteration

    def begin_iteration(self, entry, index: int, enclosing: tuple) -> None:
        self.iteration = enclosing + (index,)
        for storage in entry.carried:
            self.instances.create(storage, 1)

    def leave_repeat(self, entry, enclosing: tuple) -> None:
        self.iteration = enclosing

    def enter_branch(self, entry) -> int:
        return len(self.nodes)

    def side_walked(self, entry, before: int) -> None:
        # a branch neither side of which runs a backward node changes nothing that lives
        if len(self.nodes) != before:
            raise PeakUnknown(f"an undecided branch ({entry.condition}) whose sides differ in what "
                              "the backward keeps")

    def checkpointed(self, entry, executions) -> None:
        raise PeakUnknown("activation checkpointing: the backward's recompute is not modelled")

    def _bytes(self, elements, dtype) -> int:
        size = _itemsize_of(dtype, self.default_dtype)
        if elements is None or size is None:
            raise PeakUnknown("the size of a tensor the backward makes is not known")
        return elements * size

    def _storage_bytes(self, storage) -> int:
        if storage is None:
            return 0
        size = _nbytes(storage, self.default_dtype)
        if size is None:
            raise PeakUnknown("the size of a tensor the backward makes is not known")
        return size

    def _node(self, module: str, saved, own: int, incoming: int, output) -> None:
        index = len(self.nodes)
        self.nodes.append(_Node(index, module, self.iteration, own, incoming, output))
        if output is not None:
            self.buffers.made(index, self.instances.token(output))
        for storage in saved:
            token = self.instances.token(storage)
            if token not in self.first_saver:
                self.first_saver[token] = (storage, index)

    def site(self, entry, executions) -> None:
        memory = entry.memory
        if memory is None or not any(entry.grads):
            return
        self.instances.output(memory, 1)
        saved = list(_resolve(memory.saved(entry.grads), memory))
        own = incoming = self._storage_bytes(memory.output)  # the gradient of its result
        operands = entry.site.arguments or entry.site.operands
        for index, (operand, grad) in enumerate(zip(operands, entry.grads)):
            if not grad or (index == 1 and entry.site.spec.model == "linear" and entry.site.spec.form == "module"):
                continue  # an nn.Linear's weight: its gradient is the parameter's
            layout = self.run.storage.layout(operand)
            if layout is None:
                raise PeakUnknown(f"the gradient of an operand of {entry.site.expression} is of unknown size")
            if layout.storage.parameter:
                continue
            if layout.sizes is None:
                raise PeakUnknown(f"the gradient of an operand of {entry.site.expression} is of unknown size")
            elements = 1
            for size in layout.sizes:
                elements *= size
            own += self._bytes(elements, layout.storage.dtype)
        self._node(entry.module, saved, own, incoming, memory.output)

    def _op(self, entry) -> None:
        if not entry.storages:
            return  # emptied by gradient_flow: the backward never reaches the op's result, nothing runs
        saved = [s for s in entry.storages if s is not None and not s.parameter]
        own = incoming = self._storage_bytes(entry.output)
        own += sum(self._bytes(elements, dtype) for elements, dtype in (*entry.inputs, *entry.temporary))
        # a leaf torch module's op (nn.Embedding, a norm) reads that module's parameters
        self._node(entry.owner if entry.owner is not None else entry.module, saved, own, incoming, entry.output)


def _itemsize_of(dtype, default_dtype):
    class _Probe:  # retention's dtype lookup takes a storage
        pass

    probe = _Probe()
    probe.dtype = dtype
    return _itemsize(probe, default_dtype)


def _seed_by_sum(run, nodes, returned) -> None:
    """The backward starts from what the forward returns: a one-element tensor there is the loss
    (`loss.backward()`, a 0-dim gradient of ones); otherwise the step sums the tensors it returns (the
    zoo's `out.logits.float().sum()`), and the gradient of a sum is its scalar gradient expanded —
    no storage — so the node that made a returned tensor receives no new gradient tensor. An op
    between them that makes a new tensor (a cast, `* scale`) materializes it: its producer's incoming
    gradient stays its result's size."""
    canonical = run.live.canonical
    if not returned or any(storage.numel == 1 for storage in returned):
        return
    pending = {id(canonical(storage)) for storage in returned}
    for node in reversed(nodes):  # the last maker of a storage made the returned instance
        if node.output is not None and id(canonical(node.output)) in pending:
            pending.discard(id(canonical(node.output)))
            node.own -= node.incoming
            node.incoming = 0


def _parameter_gradients(nodes, gradient_paths: dict, tied: dict):
    """(bytes of parameter gradients that become live at each node, bytes each node holds besides
    while it runs, bytes live from the start of the backward). A parameter's gradient lives from the
    backward of the last node (in forward order, per loop iteration or unrolled pass for a repeated block's copies)
    of the modules that read it; each later contribution (a tied weight read by a second module) is
    a new gradient the engine sums with the buffered one: the new one and the sum, at that node."""
    count = len(nodes)
    arrives, extra, summed, unplaced = [0] * (count + 1), [0] * (count + 1), [0] * (count + 1), 0
    by_path: dict = {}
    for node in nodes:
        by_path.setdefault(node.module, {})[node.iteration] = node.index  # the last node per iteration
    for key, (grad_bytes, copies) in gradient_paths.items():
        path = key[0]
        readers = [path, *tied.get(key, ())]
        groups: dict = {}  # iteration -> [last node index of each reading module]
        for reader in readers:
            for iteration, last in by_path.get(reader, {}).items():
                groups.setdefault(iteration, []).append(last)
        if not groups:
            unplaced += grad_bytes
            continue
        if copies and len(groups) == copies and grad_bytes % copies == 0:
            share, placed = grad_bytes // copies, list(groups.values())
        else:  # copies the iterations do not tell apart: all from the first arrival
            share, placed = grad_bytes, [[index for group in groups.values() for index in group]]
        for lasts in placed:
            first, *later = sorted(lasts, reverse=True)
            arrives[first] += share
            for index in later:
                extra[index] += share
                summed[index] += 2 * share
    return arrives, extra, summed, unplaced


def training_peak(run, values: dict, gradient_paths: dict, tied: dict, optimizer: str, sqrt_groups: list,
                  sizes: dict, default_dtype: str, master_weights) -> tuple:
    """(peak bytes, phase) of a steady-state training step; raises PeakUnknown with the reason.
    `gradient_paths`: (module path, name) -> (gradient bytes of the parameter, copies); `tied`: the
    same key -> the other module paths that read it; `sqrt_groups`: the bytes of the `exp_avg_sq`s
    per dtype group, in the optimizer's order."""
    persistent = [values.get(name) for name in ("parameters", "optimizer_states", "master_weights")]
    gradients, activations = values.get("gradients"), values.get("activations")
    if None in persistent or gradients is None:
        raise PeakUnknown("the parameters, gradients or optimizer states are not known")
    if activations is None:
        raise PeakUnknown("the activations are not known (totals.memory.unknown.activations)")
    if optimizer not in _IN_PLACE_STEPS | _SQRT_STEPS | {"adafactor"}:
        raise PeakUnknown(f"the temporaries of {optimizer}'s step() are not modelled")
    base = sum(persistent)
    walk = _Walk(run, sizes, default_dtype, _Steps(MAX_WALKED_ENTRIES))
    walk.walk(run.stack[0])
    nodes = walk.nodes
    returned = run.live.storages(run.returned)
    _seed_by_sum(run, nodes, returned)
    count = len(nodes)
    # saved bytes alive while node i runs: those whose earliest saver is at or before i
    freed_after = [0] * (count + 1)
    for storage, first in walk.first_saver.values():
        freed_after[first] += walk._storage_bytes(storage)
    saved_live, running = [0] * count, 0
    for index in range(count):
        running += freed_after[index]
        saved_live[index] = running
    arrives, extra, summed, unplaced = _parameter_gradients(nodes, gradient_paths, tied)
    # the forward ends with what it saved and what it returns (the logits the loss reads; a tensor
    # both saved and returned once)
    held = sum(walk._storage_bytes(storage) for storage in returned
               if walk.instances.token(storage) not in walk.first_saver)
    best, phase = base + activations + held, "forward"
    grads_live = unplaced
    buffers = walk.buffers
    moment = buffers.after(count, base + (saved_live[count - 1] if count else 0) + grads_live)
    if moment > best:
        best, phase = moment, "backward"
    for index in range(count - 1, -1, -1):
        grads_live += arrives[index]
        node = nodes[index]
        buffers.before(index)
        live = base + saved_live[index] + grads_live + buffers.total + node.own + extra[index]
        if summed[index]:  # the engine's sum into a tied weight's buffer, after the node has run
            after = saved_live[index] - freed_after[index]
            live = max(live, base + after + grads_live + buffers.total + node.own - node.incoming + summed[index])
        # the reads of tensors in parts made just before this node: their backward runs next
        live = max(live, buffers.after(index, base + saved_live[index] - freed_after[index] + grads_live))
        if live > best:
            best, phase = live, "backward"
    temporaries, previous = 0, 0
    if optimizer in _SQRT_STEPS:
        for group in sqrt_groups:  # the list of the previous group is still bound while this one's is made
            temporaries = max(temporaries, previous + group)
            previous = group
    if optimizer == "adafactor":
        for group in sqrt_groups:  # AdafactorGroup each, in torch's order
            temporaries = max(temporaries, group.live(previous))
            previous = group.full
    # mixed precision (docs/memory.md, *Mixed precision*): before step() each master's `.grad` is its
    # parameter's gradient cast to the master's dtype (`master.grad = param.grad.float()`), a tensor
    # like the master, while the parameters' own gradients stay bound until zero_grad(); the copy back
    # into the parameters is in place
    master_gradients = values["master_weights"] if master_weights is not None else 0
    step = base + gradients + master_gradients + temporaries
    if step > best:
        best, phase = step, "optimizer"
    return best, phase
