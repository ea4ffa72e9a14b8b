"""The walk of memory_live's records: the largest live set of an inference pass, in bytes, by the
liveness model memory_live.py states (docs/memory.md, *Inference*)."""

from __future__ import annotations

from .memory_live import Held, LiveUnknown, LoopEntry, Used
from ..values.objects import Called, Checkpointed, Choice, Created, Repeat, SiteEntry
from .entry_walk import EntryWalk, every_entry
from .retention import MAX_WALKED_ENTRIES, RetentionTooLarge, _Instances, _nbytes, _resolve, _Steps

_EINSUM_MODELS = frozenset({"contraction", "einsum", "einops", "dot_general"})  # as memory_activations'


class _Walk(EntryWalk):
    """Every record a position; a loop's iterations each in turn (its trip count known); an undecided
    branch only where one side stands for every side."""

    repeats, choices = "each", "one for all"

    def __init__(self, default_dtype: str, steps: _Steps, sizes: dict, canonical=lambda storage: storage) -> None:
        super().__init__(steps, sizes)
        self.default_dtype = default_dtype
        self.canonical = canonical  # a storage an op returned as its input's: that one
        self.instances = _Instances()
        self.position = 0
        self.first: dict = {}  # token -> position it is made at
        self.last: dict = {}  # token -> last position that mentions it
        self.storage: dict = {}  # token -> storage
        self.refs: dict = {}  # token -> slots holding it
        self.slots: dict = {}  # slot -> tokens it holds
        self.made: set = set()  # tokens made in the walked forward (the rest: before it, buffers)

    def _mention(self, token, storage) -> None:
        self.storage[token] = storage
        self.first.setdefault(token, self.position)
        self.last[token] = self.position

    def _use(self, storage) -> None:
        storage = self.canonical(storage) if storage is not None else None
        if storage is None or storage.parameter:
            return
        self._mention(self.instances.token(storage), storage)

    def unknown_trips(self, entry, executions) -> None:
        raise LiveUnknown("a loop's trip count is not known")

    def representative(self, entry):
        # sides that make no tensor and leave the names bound alike: the live set is the same
        # whichever runs (a read only lengthens a life where nothing is made)
        nets = [_bindings(side) for side in entry.sides]
        if any(net is None for net in nets) or any(net != nets[0] for net in nets[1:]):
            raise LiveUnknown(f"an undecided branch ({entry.condition}) decides which tensors live")
        return entry.sides[0]

    # every record is a position, read or not: created, site and record each take one

    def created(self, entry, executions) -> None:
        self.position += 1
        if self.canonical(entry.storage) is not entry.storage:
            return  # no allocation: the op returned its input
        token = self.instances.created(entry.storage, 1)
        if token is not None and not entry.storage.parameter:
            self.made.add(token)
            self._mention(token, entry.storage)

    def site(self, entry, executions) -> None:
        self.position += 1
        memory = entry.memory
        if memory is not None:
            if memory.output is not None and id(memory.output) not in self.instances.outputs:
                token = self.instances.create(memory.output, 1)
                self.instances.outputs.add(id(memory.output))
                self.made.add(token)
            for storage in _resolve(memory.used(), memory):
                self._use(storage)

    def record(self, entry, executions) -> None:
        self.position += 1
        kind = type(entry)
        if kind is Used:
            for storage in entry.storages:
                self._use(storage)
        elif kind is Held:
            self._held(entry)
        elif kind is LoopEntry:
            self._alias(entry)

    def _held(self, entry: Held) -> None:
        for token in self.slots.get(entry.slot, ()):
            self.refs[token] -= 1
            self.last[token] = self.position
        tokens = []
        for storage in entry.storages:
            token = self.instances.token(storage)
            self._mention(token, storage)
            self.refs[token] = self.refs.get(token, 0) + 1
            tokens.append(token)
        self.slots[entry.slot] = tuple(tokens)

    def _alias(self, entry: LoopEntry) -> None:
        """A body recorded once: the storages its first pass found in each name stand for what the
        name holds now (on iteration k+1, iteration k's results)."""
        for slot, storages in entry.held:
            tokens = self.slots.get(slot, ())
            if len(tokens) != len(storages):
                raise LiveUnknown("a name in a loop holds a different number of tensors from pass to pass")
            for storage, token in zip(storages, tokens):
                self.instances.current[id(storage)] = (self.storage[token], token)

    def peak(self, returned: tuple, inputs: tuple = ()) -> int:
        """The most bytes live at one position; `returned`: storages the forward's result holds;
        `inputs`: the entry's, live throughout."""
        end = self.position
        for storage in inputs:
            found = self.instances.current.get(id(storage))
            token = found[1] if found is not None and found[0] is storage else self.instances.create(storage, 1)
            self.storage[token], self.first[token], self.last[token] = storage, 1, end
            self.made.add(token)
        for storage in returned:
            found = self.instances.current.get(id(storage))
            if found is not None and found[1] in self.made:
                self.last[found[1]] = end
        delta = [0] * (end + 2)
        for token in self.made:
            if token not in self.first:
                continue
            size = _nbytes(self.storage[token], self.default_dtype)
            if size is None:
                raise LiveUnknown("the size of a tensor the forward makes is not known")
            delta[self.first[token]] += size
            delta[self.last[token] + 1] -= size
        best = running = 0
        for position in range(1, end + 1):
            running += delta[position]
            best = max(best, running)
        return best


def _records_storages(entries) -> bool:
    return any(type(entry) in (Created, Held, SiteEntry) for entry in every_entry(entries))


def _bindings(entries, inner: set | None = None) -> dict | None:
    """What a branch side leaves its function's names holding ({slot: storages}), or None when it
    makes a tensor (or runs a loop or branch that binds one). The names of the functions it calls
    (`inner` frames) are let go when they return: left out."""
    top = inner is None
    inner = set() if top else inner
    net: dict = {}
    for entry in entries:
        kind = type(entry)
        if kind in (Created, SiteEntry):
            return None
        if kind is Held:
            net[entry.slot] = entry.storages
        elif kind is Called:
            found = _bindings(entry.entries, inner)
            if found is None:
                return None
            inner.update(slot[0] for slot in found)
            net.update(found)
        elif kind in (Repeat, Choice, Checkpointed) and _records_storages(
                [*getattr(entry, "entries", ()), *(e for side in getattr(entry, "sides", ()) for e in side)]):
            return None
    if top:
        net = {slot: held for slot, held in net.items() if slot[0] not in inner}
    return net


def _einsum_sites(entries, convolutions: bool = False) -> list:
    """The sites (einsum-style contractions, or convolutions) whose live storages are not modelled."""
    found = []
    for entry in every_entry(entries):
        if type(entry) is SiteEntry:
            spec = entry.site.spec
            if spec.model in _EINSUM_MODELS and (spec.operation == "convolution") == convolutions:
                found.append(entry.site.expression)
    return found


def inference_activations(run, sizes: dict, default_dtype: str, max_entries: int = MAX_WALKED_ENTRIES) -> int:
    """The largest live set of non-parameter tensors over the forward, in bytes; raises
    LiveUnknown with the reason."""
    if run.storage.failure is not None:
        raise LiveUnknown(f"the storages could not be tracked ({run.storage.failure})")
    if run.live.failure is not None:
        raise LiveUnknown(f"what lives could not be tracked ({run.live.failure})")
    left_out = len(run.unfollowed) + len(run.limits)
    if left_out:
        raise LiveUnknown(f"{left_out} call(s) not followed: what they make is not known")
    unknown = list(dict.fromkeys(run.live.unknown))
    if unknown:
        more = f" (and {len(unknown) - 3} more)" if len(unknown) > 3 else ""
        raise LiveUnknown("what these ops allocate while they run is not modelled: " + "; ".join(unknown[:3]) + more)
    einsums = _einsum_sites(run.stack[0])
    if einsums:
        raise LiveUnknown("the permuted, reshaped copies an einsum-style contraction hands to bmm are not modelled: "
                          + "; ".join(dict.fromkeys(einsums[:3])))
    convolutions = _einsum_sites(run.stack[0], convolutions=True)
    if convolutions:  # held against MemTracker they came out about twice the real live set
        raise LiveUnknown("what a convolution holds while it runs (its unfolded input) is not modelled: "
                          + "; ".join(dict.fromkeys(convolutions[:3])))
    run.live.settle_restated()
    walk = _Walk(default_dtype, _Steps(max_entries), sizes, run.live.canonical)
    try:
        walk.walk(run.stack[0])
    except RetentionTooLarge as error:  # bounded work: said so, the other figures stand
        raise LiveUnknown(str(error)) from error
    inputs = tuple(s for value in run.live.inputs for s in run.live.storages(value, make=True))
    return walk.peak(run.live.storages(run.returned), inputs)
