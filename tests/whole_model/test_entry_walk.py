"""The memory walks' shared traversal (memory/entry_walk.py) on a hand-built tree: a loop of 3 over
a call run twice, whose callee holds a site and an undecided branch. Each hook sees what it should,
a call is replayed (never multiplied), and a `scaled` loop multiplies the executions."""

import pytest

from shape_annotations import Const, Sym
from tensorcost_lint.whole_model.memory.entry_walk import CHOICES, REPEATS, EntryWalk, every_entry
from tensorcost_lint.whole_model.memory.retention import RetentionTooLarge, _Steps
from tensorcost_lint.whole_model.values.objects import (
    Called, Checkpointed, Choice, Created, Repeat, SiteEntry, UnrolledPass
)


def _tree(count=Const(3)):
    site = SiteEntry("matmul", "block", (True,))
    left, right = Created("left"), Created("right")
    callee = [site, Choice("self.flag", ([left], [right, UnrolledPass(0)]))]
    return [Repeat(count, [Called(callee, count=2)]), Checkpointed("head", ("x",), [Created("checkpointed")])]


class _Seen(EntryWalk):
    """Every hook, in order, with the executions it was handed."""

    def __init__(self, repeats, choices, sizes=None, budget=1000):
        super().__init__(_Steps(budget), sizes)
        self.repeats, self.choices, self.seen = repeats, choices, []
        self.state = ()

    def created(self, entry, executions):
        self.seen.append(("created", entry.storage, executions))
        self.state += (entry.storage,)

    def site(self, entry, executions):
        self.seen.append(("site", entry.site, executions))

    def record(self, entry, executions):
        self.seen.append(("record", type(entry).__name__, executions))

    def enter_repeat(self, entry, executions):
        self.seen.append(("enter repeat", executions))
        return "entered"

    def begin_iteration(self, entry, index, entered):
        self.seen.append(("iteration", index, entered))

    def leave_repeat(self, entry, entered):
        self.seen.append(("leave repeat", entered))

    def unknown_trips(self, entry, executions):
        self.seen.append(("unknown trips", executions))

    def enter_branch(self, entry):
        self.seen.append(("enter branch", entry.condition))
        return len(self.seen)

    def side_walked(self, entry, entered):
        self.seen.append(("side walked", entered))

    def fork(self):
        return self.state

    def resume(self, state):
        self.seen.append(("resume", state))
        self.state = state

    def weigh(self):
        return len(self.state)

    def representative(self, entry):
        self.seen.append(("representative", entry.condition))
        return entry.sides[1]


def _kinds(seen, kind):
    return [event for event in seen if event[0] == kind]


def test_strategies_are_one_table_each():
    assert set(REPEATS) == {"scaled", "once", "each"}
    assert set(CHOICES) == {"in turn", "apart", "one for all"}


def test_a_scaled_loop_multiplies_the_executions_and_a_call_replays_its_summary():
    walk = _Seen("scaled", "in turn")
    walk.walk(_tree())
    # the body once, under 3 executions; the call's summary twice, each time whole
    assert _kinds(walk.seen, "site") == [("site", "matmul", 3)] * 2
    assert walk.seen[0] == ("enter repeat", 3)
    assert walk.seen[-2] == ("leave repeat", "entered")
    assert _kinds(walk.seen, "iteration") == []
    # in turn: both sides, one after the other, each followed by side_walked
    assert walk.seen[2:7] == [("enter branch", "self.flag"), ("created", "left", 3), ("side walked", 3),
                              ("created", "right", 3), ("record", "UnrolledPass", 3)]
    assert walk.seen[7] == ("side walked", 3)
    # the checkpointed call's function runs as the forward runs it, outside the loop
    assert walk.seen[-1] == ("created", "checkpointed", 1)


def test_scaled_loops_nest_and_an_unknown_count_leaves_the_executions_unknown():
    inner = _tree()[0]
    walk = _Seen("scaled", "in turn", sizes={"n": 5})
    walk.walk([Repeat(Sym("n"), [inner])], 2)
    assert _kinds(walk.seen, "site") == [("site", "matmul", 30)] * 2
    walk = _Seen("scaled", "in turn")
    walk.walk(_tree(Sym("depth")))
    assert _kinds(walk.seen, "site") == [("site", "matmul", None)] * 2


def test_once_walks_the_body_once_with_the_executions_unchanged():
    walk = _Seen("once", "in turn")
    walk.walk(_tree(Sym("depth")))  # the count is never read
    assert _kinds(walk.seen, "site") == [("site", "matmul", 1)] * 2
    assert walk.seen[0] == ("enter repeat", 1)
    assert _kinds(walk.seen, "leave repeat") == [("leave repeat", "entered")]


def test_each_walks_every_iteration_numbered():
    walk = _Seen("each", "in turn")
    walk.walk(_tree())
    assert _kinds(walk.seen, "site") == [("site", "matmul", 1)] * 6  # 3 iterations × 2 calls
    assert _kinds(walk.seen, "iteration") == [("iteration", index, "entered") for index in range(3)]
    assert walk.seen[0] == ("enter repeat", 1) and walk.seen[1] == ("iteration", 0, "entered")
    assert _kinds(walk.seen, "created").count(("created", "left", 1)) == 6


def test_each_hands_an_unknown_count_to_its_hook_and_walks_nothing():
    walk = _Seen("each", "in turn")
    walk.walk(_tree(Sym("depth")))
    assert walk.seen == [("unknown trips", 1), ("created", "checkpointed", 1)]


def test_apart_walks_each_side_from_the_same_start_and_keeps_the_heavier():
    walk = _Seen("once", "apart")
    walk.walk(_tree(Const(1)))
    resumed = _kinds(walk.seen, "resume")
    # each call's branch: each side from the state before it, then the heavier side's state;
    # the second call starts from the first's kept state
    assert resumed == [("resume", ()), ("resume", ()), ("resume", ("left",)),
                       ("resume", ("left",)), ("resume", ("left",)), ("resume", ("left", "left"))]
    assert walk.state == ("left", "left", "checkpointed")


def test_apart_keeps_the_first_of_equal_sides():
    walk = _Seen("once", "apart")
    walk.walk([Choice("c", ([Created("a")], [Created("b")]))])
    assert walk.state == ("a",)


def test_one_for_all_walks_the_representative_side_only():
    walk = _Seen("once", "one for all")
    walk.walk(_tree(Const(1)))
    assert _kinds(walk.seen, "representative") == [("representative", "self.flag")] * 2
    assert _kinds(walk.seen, "created") == [("created", "right", 1)] * 2 + [("created", "checkpointed", 1)]


def test_every_walked_list_is_taken_from_the_budget():
    # root 2, loop body 1, callee 2 × 2 calls, each side walked (1 + 2) × 2, checkpointed 1
    walk = _Seen("once", "in turn")
    walk.walk(_tree())
    assert walk.steps.left == 1000 - (2 + 1 + 4 + 6 + 1)
    with pytest.raises(RetentionTooLarge):
        _Seen("each", "in turn", budget=20).walk(_tree())


def test_the_work_hook_says_what_a_list_costs():
    class _Free(_Seen):
        def work(self, entries):
            return sum(type(entry) is not Created for entry in entries)

    walk = _Free("once", "in turn")
    walk.walk(_tree())
    assert walk.steps.left == 1000 - (2 + 1 + 4 + 2 + 0)


def test_hooks_a_walk_leaves_out_change_nothing_or_say_what_is_missing():
    class _Bare(EntryWalk):
        repeats = "each"

    _Bare(_Steps(100)).walk([Repeat(Const(2), [Created("a")]), Choice("c", ([], []))])
    with pytest.raises(NotImplementedError, match="unknown count"):
        _Bare(_Steps(100)).walk([Repeat(Sym("n"), [])])


def test_every_entry_lists_each_entry_once_before_those_it_holds():
    tree = _tree()
    loop, checkpointed = tree
    call = loop.entries[0]
    site, choice = call.entries
    (left,), (right, unrolled) = choice.sides
    found = list(every_entry(tree))
    # a call's summary once, whatever its count: a search, not a replay
    assert [id(entry) for entry in found] == [id(entry) for entry in (
        loop, call, site, choice, left, right, unrolled, checkpointed, checkpointed.entries[0])]
    deep = [Created("bottom")]
    for _ in range(2000):  # deeper than Python's recursion limit
        deep = [Called(deep)]
    assert list(every_entry(deep))[-1].storage == "bottom"
