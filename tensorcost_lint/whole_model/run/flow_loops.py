"""Loops in a whole-model flow: a loop over a known sequence unrolled, one over n repeated modules run
once and multiplied (its first pass apart when it makes a carried tensor need a gradient), one whose
carried value changes shape costed pass by pass. A mixin of ModelFlow (model_flow.py)."""

from __future__ import annotations

import libcst as cst

from shape_annotations import BinOp, Const, evaluate_dim, simplify_dim

from ...analysis.facts import ScalarFact, SequenceFact
from ..python import class_members, known_iteration, known_values, python_values
from . import expressions
from ..values import unrolled_loops
from .flow_merges import merge_sides
from ..values.objects import ModuleList, Repeat, known_count, modules_iterated


class FlowLoops:
    """ModelFlow's `for` and `while` loops."""

    def _loop(self, node) -> None:
        if isinstance(node, cst.For):
            enumerated = expressions.enumerated(node.iter, self.env)  # `for i, layer in enumerate(self.h)`
            iterated = self.evaluator.eval(enumerated if enumerated is not None else node.iter)
            iterated = class_members.protocol_items(self.evaluator, iterated)  # a Sequence class of the tree
            iterated = modules_iterated(iterated)  # `for layer in self.layers` of an nn.Sequential
            if type(iterated) is python_values.GrowingList:
                iterated = known_values.appended_data(iterated) or iterated.as_module_list()
            element, count, reason = None, None, "loop trip count is not known statically"
            index = None  # the int a repeated module list was built with (loop_indices)
            if unrolled_loops.unrollable(iterated):
                items = iterated.items if enumerated is None else known_values.index_pairs(iterated.items)
                unrolled_loops.unrolled_loop(self, node, items)
                return
            known = known_iteration.loop_items(iterated, node, enumerated is not None, self.env,
                                               building=self.run_.building > 0)
            if known is not None:  # a known tuple, list or dict: each item in turn
                unrolled_loops.unrolled_loop(self, node, known)
                return
            if type(iterated) is ModuleList:
                if iterated.count is not None:
                    element, count, index = iterated.items[0], iterated.count, iterated.index
                elif iterated.items and all(i is iterated.items[0] for i in iterated.items):
                    element, count = iterated.items[0], Const(len(iterated.items))
            elif isinstance(node.iter, cst.Call) and isinstance(node.iter.func, cst.Name) \
                    and node.iter.func.value == "range" and len(node.iter.args) == 1:
                count = self.evaluator.dim_of(node.iter.args[0].value)
                element = ScalarFact()  # an int: `w[i]` drops a dim
            elif known_iteration.range_of(self.evaluator, node.iter) is not None:  # `range(1, n)`: each index
                unrolled_loops.unrolled_loop(self, node, known_iteration.range_of(self.evaluator, node.iter))
                return
            if count is not None and (enumerated is not None or type(element) is ScalarFact):
                # the body reads the index: each index in turn (a ModuleList under enumerate, or range)
                indexed = known_iteration.indexed_items(node, element if enumerated is not None else None, count,
                                                        self.ctx.settings.sizes)
                if indexed is not None:
                    unrolled_loops.unrolled_loop(self, node, indexed, index if enumerated is not None else None)
                    return
            if enumerated is not None:
                element = SequenceFact((None, element)) if element is not None else None
            body_env = dict(self.env)
            self._with_env(body_env).assign(node.target, element, None)
        else:
            if self.run_.decide(self.evaluator, node.test) is False:  # `while x.dim() < 3` of a 3-d x: no pass
                if node.orelse is not None:
                    self._set_env(self._block(node.orelse.body, dict(self.env)))
                return
            body_env, count, reason, index = dict(self.env), None, "while loop: trip count is not known statically", None
        self.run_.doubt()  # one pass stands for many, or for a count not known: what each pass does is not
        before = self._grad_signature(body_env)
        repeat = Repeat(count, [], None if count is not None else reason)
        indices = self.run_.loop_indices
        trips = known_count(count, self.ctx.settings.sizes) if index is not None else None
        index = index if trips else None  # a pass stands for executions [start, stop) of a known count
        offset = 0
        with indices.covering(index, 0, trips or 0, len(self.run_.loop_counts)) as covered:
            entry_env, body_env = self._pass(node, repeat, body_env, count)
        if count is not None and self._grad_signature(body_env) != before and self.run_.mode == "training" \
                and known_count(count, self.ctx.settings.sizes) != 1:  # one pass: there is no rest to run
            # the first pass made a loop-carried tensor need a gradient (`x` from an entry input
            # through a parameter): the first iteration costs what it did, the rest cost more
            rest = Repeat(simplify_dim(BinOp("-", count, Const(1))), [])
            repeat.count = Const(1)
            if covered is not None:
                covered.stop = 1
            self.run_.add(repeat)
            self._with_env(body_env).assign(node.target, element, None)
            offset = 1
            with indices.covering(index, 1, trips or 0, len(self.run_.loop_counts)) as covered:
                entry_env, body_env = self._pass(node, rest, body_env, count)
            repeat = rest
        changed = None if count is None else known_iteration.reshaped_carry(entry_env, body_env, self.ctx.settings.sizes)
        if changed is not None:  # `repeat.count`: the passes left (count - 1 after a split)
            if covered is not None:
                covered.stop = covered.start + 1
            body_env = self._pass_by_pass(node, element, repeat.count, repeat, body_env, changed, index, offset)
        else:
            self.run_.add(repeat)
        if index is not None:
            indices.finish(index, self.run_)
        # a loop over n >= 1 modules runs its body: what it leaves is the body's env
        known = count is not None and _at_least_one(count, self.ctx.settings.sizes)
        merged = body_env if known else merge_sides(self.run_, self.env, body_env, self.ctx.settings.sizes)
        if node.orelse is not None:
            merged = self._block(node.orelse.body, merged)
        self._set_env(merged)

    def _pass(self, node, repeat: Repeat, body_env: dict, loop_count) -> tuple[dict, dict]:
        """One run of the loop body, its entries into `repeat`: (the env it found, the env it left)."""
        entry_env = dict(body_env)
        with self.run_.collecting(repeat.entries), self.run_.in_loop(loop_count):
            self.run_.live.loop_entry(body_env)  # what the names hold where the body starts (memory_live)
            body_env = self._block(node.body, body_env)
        repeat.carried = self.run_.storage.carried(entry_env, body_env)
        return entry_env, body_env

    def _pass_by_pass(self, node, element, count, first: Repeat, body_env: dict, changed: str,
                      index=None, offset: int = 0) -> dict:
        """A loop whose carried value changes shape (`h = torch.cat([h, y], 1)`) costs each pass as it
        runs: the first pass once, then each further pass from what the one before left, until a pass
        leaves the shapes it found (the rest repeat it). An unknown or too large count: the passes
        after the first are unresolved, with why — never the first pass's cost times the count."""
        sizes = self.ctx.settings.sizes
        trips = known_count(count, sizes)
        first.count = Const(1)
        self.run_.add(first)
        if trips is None or trips > unrolled_loops.MAX_UNROLLED:
            reason = (f"`{changed}` changes shape from pass to pass and the trip count is not a known number of "
                      f"at most {unrolled_loops.MAX_UNROLLED}: the passes after the first cost differently")
            self.run_.add(Repeat(None, first.entries, reason))
            return body_env
        for done in range(1, trips):
            self._with_env(body_env).assign(node.target, element, None)
            one = Repeat(Const(1), [])
            with self.run_.loop_indices.covering(index, offset + done, offset + done + 1) as covered:
                entry_env, body_env = self._pass(node, one, body_env, Const(1))
            if known_iteration.reshaped_carry(entry_env, body_env, sizes) is None:
                one.count = Const(trips - done)  # a pass that keeps the shapes: the rest are the same
                if covered is not None:
                    covered.stop = offset + trips
                self.run_.add(one)
                break
            self.run_.add(one)
        return body_env


def _at_least_one(dim, sizes) -> bool:
    try:
        value = evaluate_dim(dim, sizes)
    except Exception:  # noqa: BLE001 - an unbound dim is simply not known to be >= 1
        return False
    return value is not None and value >= 1
