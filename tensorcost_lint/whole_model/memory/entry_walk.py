"""One traversal of a run's tree of entries (values/objects.py) for the memory walks: retention's
saved and live bytes, memory_live_walk's live set, memory_peak's backward nodes.

The walk visits the entries in forward order and replays a `Called` summary once per call, never
multiplying it: the order of allocations decides what is live, so a shared callee summary is walked
as often as it runs (the FLOP totals multiply it instead). Every list it walks is taken from the
walk's work budget (`steps.take`), so a call tree that repeats past the budget is refused rather
than walked for hours.

What a walk makes of each kind of entry is its own, stated as hooks on a subclass of `EntryWalk`:

- leaves: `created` (a `Created` storage), `site` (a `SiteEntry`), `record` (any other entry that
  holds no entries: the memory modules' own records, `UnrolledPass`, `Visit`);
- a loop (`Repeat`): one of `REPEATS`, named by the walk's `repeats` —
  `scaled` walks the body once, its executions the enclosing ones × the trip count (None when
  either is not known): what the loop keeps from every iteration; `once` walks the body once, its
  executions unchanged: serial reuse, iteration k+1 in iteration k's memory; `each` walks the body
  once per iteration, numbered (`unknown_trips` when the count is not known): a liveness that
  tells the iterations apart. `enter_repeat` / `leave_repeat` bracket the loop (`enter_repeat`
  returns what `begin_iteration` and `leave_repeat` are handed);
- an undecided branch (`Choice`): one of `CHOICES`, named by the walk's `choices` —
  `in turn` walks every side one after the other, as if each ran (`enter_branch`, then
  `side_walked` after each side); `apart` walks each side from the state before the branch
  (`fork`, `resume`) and goes on from the side of greatest `weigh` (the first of equals);
  `one for all` walks the side `representative` names, standing for every side (or raises);
- a checkpointed call (`Checkpointed`): `checkpointed`, by default its function's entries as the
  forward runs them.

`executions` is how many times the walked list runs, as the enclosing `scaled` loops multiply it
(1 at the root; a `Called` replays rather than multiplies, `once` and `each` leave it as it is).

A search of the tree (is there a site of this kind anywhere?) is no walk: `every_entry` lists each
entry once, a call's summary once per `Called`, with no budget. memory_live_walk's `_bindings` stays
a fold of its own: it scopes the names of each called function's frame, which no hook would say."""

from __future__ import annotations

from itertools import chain

from ..values.objects import Called, Checkpointed, Choice, Created, Repeat, SiteEntry, known_count


class EntryWalk:
    """The shared traversal; a memory walk subclasses it and supplies its hooks (module docstring).
    `steps`: the work budget (retention._Steps); `sizes`: the dims a `scaled` or `each` loop's trip
    count is evaluated under."""

    repeats = "once"
    choices = "in turn"

    def __init__(self, steps, sizes: dict | None = None) -> None:
        self.steps, self.sizes = steps, {} if sizes is None else sizes

    def walk(self, entries, executions=1) -> None:
        self.steps.take(self.work(entries))
        for entry in entries:
            kind = type(entry)
            if kind is Called:
                for _ in range(entry.count):
                    self.walk(entry.entries, executions)
            elif kind is Repeat:
                REPEATS[self.repeats](self, entry, executions)
            elif kind is Choice:
                CHOICES[self.choices](self, entry, executions)
            elif kind is Checkpointed:
                self.checkpointed(entry, executions)
            elif kind is Created:  # the leaves dispatched here, not in a method: the walk's hot path
                self.created(entry, executions)
            elif kind is SiteEntry:
                self.site(entry, executions)
            else:
                self.record(entry, executions)

    def work(self, entries) -> int:
        """What walking `entries` (not what they hold) takes from the budget."""
        return len(entries)

    # -- hooks: a walk overrides those it reads; by default an entry changes nothing -------------------

    def created(self, entry: Created, executions) -> None:
        pass

    def site(self, entry: SiteEntry, executions) -> None:
        pass

    def record(self, entry, executions) -> None:
        pass

    def checkpointed(self, entry: Checkpointed, executions) -> None:
        self.walk(entry.entries, executions)  # without a backward, checkpoint just runs its function

    def enter_repeat(self, entry: Repeat, executions) -> object:
        return None

    def begin_iteration(self, entry: Repeat, index: int, entered) -> None:
        pass

    def leave_repeat(self, entry: Repeat, entered) -> None:
        pass

    def unknown_trips(self, entry: Repeat, executions) -> None:
        """`each`: the loop's trip count is not known under `sizes`."""
        raise NotImplementedError(f"{type(self).__name__} walks each iteration: say what an unknown count means")

    def enter_branch(self, entry: Choice) -> object:
        return None

    def side_walked(self, entry: Choice, entered) -> None:
        pass

    def fork(self) -> object:
        """`apart`: the state the walk has built so far (never changed again once returned)."""
        raise NotImplementedError

    def resume(self, state) -> None:
        """`apart`: go on from a state `fork` returned."""
        raise NotImplementedError

    def weigh(self) -> object:
        """`apart`: how much the state built so far holds (the side of greatest weight is kept)."""
        raise NotImplementedError

    def representative(self, entry: Choice):
        """`one for all`: the side that stands for every side of the branch, or raise why none does."""
        raise NotImplementedError


# -- loops -------------------------------------------------------------------------------------------

def _scaled(walk: EntryWalk, entry: Repeat, executions) -> None:
    count = known_count(entry.count, walk.sizes)
    inner = None if executions is None or count is None else executions * count
    entered = walk.enter_repeat(entry, inner)
    walk.walk(entry.entries, inner)
    walk.leave_repeat(entry, entered)


def _once(walk: EntryWalk, entry: Repeat, executions) -> None:
    entered = walk.enter_repeat(entry, executions)
    walk.walk(entry.entries, executions)
    walk.leave_repeat(entry, entered)


def _each(walk: EntryWalk, entry: Repeat, executions) -> None:
    count = known_count(entry.count, walk.sizes)
    if count is None:
        walk.unknown_trips(entry, executions)
        return
    entered = walk.enter_repeat(entry, executions)
    for index in range(count):
        walk.begin_iteration(entry, index, entered)
        walk.walk(entry.entries, executions)
    walk.leave_repeat(entry, entered)


REPEATS = {"scaled": _scaled, "once": _once, "each": _each}


# -- undecided branches ------------------------------------------------------------------------------

def _in_turn(walk: EntryWalk, entry: Choice, executions) -> None:
    entered = walk.enter_branch(entry)
    for side in entry.sides:
        walk.walk(side, executions)
        walk.side_walked(entry, entered)


def _apart(walk: EntryWalk, entry: Choice, executions) -> None:
    start, kept, kept_weight = walk.fork(), None, None
    for side in entry.sides:
        walk.resume(start)
        walk.walk(side, executions)
        weight = walk.weigh()  # right after the side: what it built, before the next side runs
        if kept is None or weight > kept_weight:
            kept, kept_weight = walk.fork(), weight
    walk.resume(start if kept is None else kept)


def _one_for_all(walk: EntryWalk, entry: Choice, executions) -> None:
    walk.walk(walk.representative(entry), executions)


CHOICES = {"in turn": _in_turn, "apart": _apart, "one for all": _one_for_all}


# -- searches ----------------------------------------------------------------------------------------

def every_entry(entries):
    """Every entry of the tree under `entries`, each before those it holds (a call's summary once per
    `Called`, whatever its count; a branch's sides in order): for a search, never a replay. Kept on
    an explicit stack, so an entry costs the same however deep it sits."""
    stack = [iter(entries)]
    while stack:
        for entry in stack[-1]:
            yield entry
            kind = type(entry)
            if kind is Choice:
                stack.append(chain.from_iterable(entry.sides))
                break
            if kind is Called or kind is Repeat or kind is Checkpointed:
                stack.append(iter(entry.entries))
                break
        else:
            stack.pop()
