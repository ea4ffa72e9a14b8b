"""The index a repeated module was built with, read where the run costs one pass of a loop for
many executions.

`nn.ModuleList([Layer(config, i) for i in range(n)])` is built once (one object standing for n),
so `self.layer_idx` holds an int of unknown value; a loop over the list runs its body once for
all n executions. Each execution i runs with its own `i`, and code indexed by it (a cache's
`self.layers[layer_idx].update(k, v)`) reaches item i of a list of n per-layer objects. The run
reads that as Python runs it, without running the body n times: while a pass of the loop stands
for the executions [start, stop), `items[layer_idx]` is item `start` when the pass stands for one
execution, or when items start..stop-1 are alike (the same plain value, or objects of one class
with equal attributes: each execution sees its own item in the state the others are in). The
item read stands for all of them: when the loop is done, what the pass left in it is what each
execution left in its own (the others take its attributes). Items that differ, or a list shorter
than the range: unknown, as before.

A condition the pass cannot decide because it reads the index (`if (layer_idx + 1) % k == 0:` choosing
a sparse or a dense block, `layer_idx >= config.first_k_dense_replace`) is decided by each index's own
value when the list is built index by index (ModelRun.build_container), as Python builds it: the pass
is marked as one whose executions differ, never costed as one layer with both sides."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst

from shape_annotations import Const

from ...analysis.facts import ScalarFact, SelfFact, TensorFact
from ..python.known_values import is_plain
from .storage import Layout, Storage


@dataclass
class _Pass:
    index: object  # the ScalarFact the list was built with
    start: int
    stop: int
    # id(sequence) -> (sequence, the item read): one per list the pass read by the index
    read: dict = field(default_factory=dict)
    differed: bool = False  # a list read by the index held different items over the range
    # where the pass's own loop sits in ModelRun.loop_counts (None: the pass is not a loop's, a
    # comprehension building the list)
    depth: int | None = None


class LoopIndices:
    """The passes running now, innermost last, and the ones whose items wait for the loop's end."""

    def __init__(self) -> None:
        self.running: list = []
        self.done: list = []

    @contextmanager
    def covering(self, index, start: int, stop: int, loop_depth: int | None = None):
        """A pass of a loop over a list built with `index`, standing for executions [start, stop);
        `loop_depth`: the place in ModelRun.loop_counts the loop running the pass takes."""
        if index is None or stop <= start:
            yield None
            return
        record = _Pass(index, start, stop, depth=loop_depth)
        self.running.append(record)
        try:
            yield record
        finally:
            self.running.pop()
            self.done.append(record)

    def discard(self, index) -> None:
        """The passes of `index` leave nothing to copy (a build's, read again index by index)."""
        self.done = [record for record in self.done if record.index is not index]

    def finish(self, index, run) -> None:
        """The loop over the list built with `index` is done: each item read for a range stands for
        the items of that range (their attributes become its)."""
        kept = []
        for record in self.done:
            if record.index is not index:
                kept.append(record)
                continue
            for sequence, item in record.read.values():
                if type(item) is not SelfFact:
                    continue
                for other in sequence.items[record.start + 1:record.stop]:
                    if type(other) is SelfFact and other is not item:
                        storages: dict = {}  # its own tensors, laid out as the item's (views sharing one storage)
                        other.attributes.clear()
                        other.attributes.update({name: _own(run, value, storages)
                                                 for name, value in item.attributes.items()})
        self.done = kept

    def undecided(self, interp, node) -> None:
        """`node`, a condition left undecided, reads the index of a pass running now: that pass's
        executions differ (each index decides it its own way)."""
        if not self.running:
            return
        indices = {id(record.index): record for record in self.running}
        for value in _plain_reads(node):
            record = indices.get(id(interp.eval(value)))
            if record is not None:
                record.differed = True

    def changed_once_each(self, owner, loop_counts) -> bool:
        """Whether a change made now to `owner` (`self.sizes[0] = n` in its method) happens once in
        each execution's own object: `owner` is the item a running pass read by its index (each
        execution changes its own item, once), and no other loop around runs its body for many
        executions."""
        for record in reversed(self.running):
            read = [sequence for sequence, item in record.read.values() if item is owner]
            if record.depth is None or not read:
                continue
            # one object listed twice (`[layer] * n`) is changed by each execution reaching it
            distinct = all(sum(item is owner for item in sequence.items) == 1 for sequence in read)
            return distinct and all(count == Const(1) for place, count in enumerate(loop_counts)
                                    if place != record.depth)
        return False

    def pick(self, run, sequence, key):
        """`sequence[key]` for `key` the index of a pass running now, or None."""
        record = next((r for r in reversed(self.running) if r.index is key), None)
        if record is None or record.stop > len(sequence.items):
            return None
        if id(sequence) in record.read:
            return record.read[id(sequence)][1]
        items = sequence.items[record.start:record.stop]
        if len(items) > 1 and not _alike(run, items):
            record.differed = True  # a build reading it is built index by index (ModelRun.build_container)
            return None
        record.read[id(sequence)] = (sequence, items[0])
        return items[0]


def _plain_reads(node):
    """The names and attribute chains a condition reads (`layer_idx`, `self.layer_idx`): evaluating
    them again records nothing (known_values.is_plain)."""
    found = []

    class _Reads(cst.CSTVisitor):
        def visit_Name(self, name):
            found.append(name)

        def visit_Attribute(self, attribute):
            if is_plain(attribute):
                found.append(attribute)
                return False  # the chain is read whole: its prefix `self` says nothing
            return True

        def visit_Call(self, call):
            for arg in call.args:  # a call's arguments, never the callee (it may be a method to run)
                arg.value.visit(self)
            return False

    node.visit(_Reads())
    return found


def _own(run, value, storages: dict):
    """Another execution's tensor like `value`: a new fact in a new storage of the same size, shared
    by the tensors that share `value`'s (k and v, views of one qkv projection, stay one storage)."""
    if type(value) is not TensorFact:
        return value
    copy = TensorFact(value.shape, value.dtype, value.origin, value.framework)
    layout = run.storage.layout(value)
    if layout is not None:
        storage = storages.get(id(layout.storage))
        if storage is None:
            storage = storages[id(layout.storage)] = Storage(layout.storage.numel, layout.storage.dtype,
                                                             layout.storage.parameter)
        run.storage._set(copy, Layout(storage, layout.sizes, layout.strides))
    return copy


def _alike(run, items) -> bool:
    first = items[0]
    if type(first) is SelfFact:
        instance = run.instance(first)
        return instance is not None and all(
            type(item) is SelfFact and run.instance(item) is not None
            and run.instance(item).cls is instance.cls and item.attributes == first.attributes
            and item not in run.incomplete_objects for item in items[1:])
    if type(first) is ScalarFact:  # every ScalarFact equals every other: alike when their known values are
        # (a drop-path rate per block: `rates[i]` of an unknown i is no one block's rate)
        return all(type(item) is ScalarFact for item in items) \
            and len({run.floats.value(item) for item in items}) == 1
    try:
        return all(item == first for item in items[1:]) and first is not None and hash(first) is not None
    except TypeError:
        return False
