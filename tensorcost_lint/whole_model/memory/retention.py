"""Retained bytes across a whole model, from a run's entries (objects.py) and the storages its sites
read, make and save (saved_tensors.py).

Which tensors count: the operands a contraction or attention kernel runs on (a view shares its
source's storage; a copy matmul makes is a storage of its own), their outputs, and attention's
log-sum-exp. Parameters never count. Everything is counted per storage, at its whole size (torch
keeps a storage alive while any view of it is saved; `untyped_storage().nbytes()`).

- training: the storages autograd saves for backward (A of C = A @ B when B needs a gradient, B
  when A does; attention's query, key, value, output and log-sum-exp), over all executions, at the
  end of the forward. A storage made inside a loop body exists once per iteration; one made before
  the loop once, however often the loop saves it; a checkpointed call saves only its inputs.
- inference: the largest live set under serial reuse. Walking the sites in forward order, a storage
  is live from where it is made (or first read) to the last site that reads it; a loop body is
  walked once (iteration k+1 reuses iteration k's memory) and a storage from before the loop that
  the body reads stays live to the loop's end. An undecided branch runs both sides one after the
  other (an upper bound).

A storage whose size is not known makes the total unknown (None); a per-module figure still adds
what is known."""

from __future__ import annotations

from dataclasses import dataclass, field

from estimator import lookup_dtype

from .entry_walk import EntryWalk
from .saved_tensors import OUTPUT

MAX_COUNT = 2**63 - 1
# Entries walked, calls replayed in full: the order of allocations decides what is live, so a shared
# callee summary is walked once per call (the FLOP totals multiply it instead). A call tree that
# repeats past this leaves the retained bytes unknown, said so, rather than walking 2**40 calls.
MAX_WALKED_ENTRIES = 1_000_000


class RetentionTooLarge(OverflowError):
    """The walk would exceed its entry budget (work_budget.entries)."""


class _Steps:
    def __init__(self, limit: int) -> None:
        self.limit = self.left = limit

    def take(self, count: int) -> None:
        self.left -= count
        if self.left < 0:
            raise RetentionTooLarge(f"not computed: work budget spent: more than {self.limit:,} entries walked "
                                    "for the retained bytes (work_budget.entries); the FLOP totals are exact")


@dataclass
class Retention:
    peak_bytes: int | None  # training: saved bytes; inference: the largest live set
    by_module: dict = field(default_factory=dict)  # module path -> bytes (training: saved by its sites)


def _itemsize(storage, default_dtype: str) -> int | None:
    dtype = lookup_dtype(storage.dtype or default_dtype)
    return None if dtype is None else dtype.bytes


def _nbytes(storage, default_dtype: str) -> int | None:
    size = _itemsize(storage, default_dtype)
    return None if size is None or storage.numel is None else storage.numel * size



def _resolve(storages, memory):
    for storage in storages:
        if storage is OUTPUT:
            storage = memory.output
        if storage is not None and not storage.parameter:
            yield storage


class _Instances:
    """Which allocation of a storage a name refers to at this point of the walk: each `Created`
    (a call replayed from the memo, a loop-carried value) starts a new one."""

    def __init__(self) -> None:
        self.current: dict = {}  # id(storage) -> (storage, token)
        self.made: dict = {}  # token -> executions of the scope that made it
        self.outputs: set = set()  # ids of site outputs made at their site, whose `Created` follows it

    def output(self, memory, executions) -> None:
        """A site's result is made by the site: its `Created` comes right after the site's entry."""
        if memory.output is not None and id(memory.output) not in self.outputs:
            self.create(memory.output, executions)
            self.outputs.add(id(memory.output))

    def created(self, storage, executions):
        if id(storage) in self.outputs:
            self.outputs.discard(id(storage))
            return None
        return self.create(storage, executions)

    def create(self, storage, executions) -> object:
        token = object()
        self.current[id(storage)] = (storage, token)
        self.made[token] = executions
        return token

    def token(self, storage):
        found = self.current.get(id(storage))
        if found is not None and found[0] is storage:
            return found[1]
        return self.create(storage, 1)  # made before the walked code (a buffer): once


class _Training(EntryWalk):
    """What autograd keeps at the end of the forward: a loop's body once, its saves scaled by the trip
    count; of an undecided branch's sides, the one that keeps the most."""

    repeats, choices = "scaled", "apart"

    def __init__(self, sizes, default_dtype, steps: _Steps) -> None:
        super().__init__(steps, sizes)
        self.default_dtype = default_dtype
        self.instances = _Instances()
        self.counted: dict = {}  # token -> (storage, allocations saved or None, module path)
        self.saving = True  # False in a checkpointed call: recomputed in the backward, nothing kept

    def created(self, entry, executions) -> None:
        self.instances.created(entry.storage, executions)

    def site(self, entry, executions) -> None:
        if entry.memory is not None:
            self.instances.output(entry.memory, executions)
        if self.saving and entry.memory is not None:
            for storage in _resolve(entry.memory.saved(entry.grads), entry.memory):
                self.save(storage, executions, entry.module)

    def enter_repeat(self, entry, executions) -> None:
        for storage in entry.carried:
            self.instances.create(storage, executions)

    def checkpointed(self, entry, executions) -> None:
        saving, self.saving = self.saving, False
        self.walk(entry.entries, executions)  # recomputed in the backward: nothing kept
        self.saving = saving
        if saving:
            for storage in entry.inputs:
                if storage is not None and not storage.parameter:
                    self.save(storage, executions, entry.module)

    def fork(self) -> dict:
        return self.counted

    def resume(self, state: dict) -> None:
        self.counted = dict(state)

    def weigh(self) -> int:
        total = self.total()
        return -1 if total is None else total

    def save(self, storage, executions, module: str) -> None:
        token = self.instances.token(storage)
        made = self.instances.made[token]
        # saved n times in a loop but made once before it: one allocation
        count = None if made is None or executions is None else min(made, executions)
        previous = self.counted.get(token)
        if previous is None:
            self.counted[token] = (storage, count, module)
        elif previous[1] is not None and (count is None or count > previous[1]):
            self.counted[token] = (storage, count, previous[2])

    def total(self) -> int | None:
        total = 0
        for storage, count, _ in self.counted.values():
            size = _nbytes(storage, self.default_dtype)
            if size is None or count is None:
                return None
            total += size * count
        return _checked(total)

    def by_module(self) -> dict:
        sums: dict = {}
        for storage, count, module in self.counted.values():
            size = _nbytes(storage, self.default_dtype)
            if size is not None and count is not None:
                sums[module] = sums.get(module, 0) + size * count
        return sums


class _Inference(EntryWalk):
    """The largest live set under serial reuse: a loop's body once, an undecided branch's sides one
    after the other (an upper bound)."""

    repeats, choices = "once", "in turn"

    def __init__(self, default_dtype, steps: _Steps) -> None:
        super().__init__(steps)
        self.default_dtype = default_dtype
        self.instances = _Instances()
        self.position = 0
        self.first: dict = {}  # token -> position it is live from
        self.last: dict = {}  # token -> last position that reads it
        self.storage: dict = {}  # token -> storage
        self.modules: list = []  # (position, module path) of each site

    def created(self, entry, executions) -> None:
        token = self.instances.created(entry.storage, 1)
        if token is not None:
            self.first[token] = self.position + 1
            self.storage[token] = entry.storage

    def site(self, entry, executions) -> None:
        self.position += 1
        self.modules.append((self.position, entry.module))
        if entry.memory is not None:
            self.instances.output(entry.memory, 1)
            for storage in _resolve(entry.memory.used(), entry.memory):
                token = self.instances.token(storage)
                self.storage[token] = storage
                self.first.setdefault(token, self.position)
                self.last[token] = self.position

    def enter_repeat(self, entry, executions) -> int:
        start = self.position
        for storage in entry.carried:
            token = self.instances.create(storage, 1)
            self.first[token], self.storage[token] = start + 1, storage
        return start

    def leave_repeat(self, entry, start: int) -> None:
        for token, last in self.last.items():
            if last > start and self.first[token] <= start:
                self.last[token] = self.position  # read on every iteration

    def live(self):
        """(bytes live at each site position, index 1..n; whether every size is known)."""
        delta = [0] * (self.position + 2)
        known = True
        for token, last in self.last.items():
            size = _nbytes(self.storage[token], self.default_dtype)
            if size is None:
                known = False
                continue
            delta[self.first[token]] += size
            delta[last + 1] -= size
        live, running = [0] * (self.position + 1), 0
        for position in range(1, self.position + 1):
            running += delta[position]
            live[position] = running
        return live, known


def _checked(value: int) -> int:
    if value > MAX_COUNT:
        raise OverflowError("retained bytes exceed 2**63-1")
    return value


def _prefixes(module: str):
    yield ""
    if module:
        parts = module.split(".")
        for index in range(1, len(parts) + 1):
            yield ".".join(parts[:index])


def retention(entries, sizes, default_dtype: str, training: bool, max_entries: int = MAX_WALKED_ENTRIES) -> Retention:
    steps = _Steps(max_entries)
    if training:
        walk = _Training(sizes, default_dtype, steps)
        walk.walk(entries)
        inclusive: dict = {}
        for module, size in walk.by_module().items():
            for prefix in _prefixes(module):
                inclusive[prefix] = inclusive.get(prefix, 0) + size
        return Retention(walk.total(), inclusive)
    walk = _Inference(default_dtype, steps)
    walk.walk(entries)
    live, known = walk.live()
    peaks: dict = {}
    for position, module in walk.modules:
        for prefix in _prefixes(module):
            peaks[prefix] = max(peaks.get(prefix, 0), live[position])
    peak = max(live[1:], default=0)
    return Retention(_checked(peak) if known else None, peaks)
