"""Loops run pass by pass, each item bound to the loop target in turn: a list of different modules
(`for layer in self.layers` where a hybrid model's layers differ: each pass costs its own module),
and the loops flow_loops.py finds over known tuples, lists and dicts, `range(1, n)`, or a repeated
module list whose index the body reads. A list of one module repeated n times is read once under a
repeat of n instead; past MAX_UNROLLED items nothing is unrolled (bounded work).

Apart from python_values.py because this is flow, not a value: it drives the loop's body through
the model flow (`flow._block`) once per item."""

from __future__ import annotations

import libcst as cst

from shape_annotations import Const

from .objects import ModuleList, UnrolledPass


MAX_UNROLLED = 256


def unrollable(value) -> bool:
    """A listed (not repeated) module list whose items differ: the loop runs each in turn; an empty
    one (`self.layers[start:stop]` past its end) runs no pass."""
    return type(value) is ModuleList and value.count is None and len(value.items) <= MAX_UNROLLED \
        and (not value.items or not all(item is value.items[0] for item in value.items))


def unrolled_loop(flow, node: cst.For, items, index=None) -> None:
    """Each item in turn; `index`: the int the repeated module list was built with, which each
    pass reads as its own position (loop_indices)."""
    env = dict(flow.env)
    run = flow.run_
    marked = run.mode == "training" and not run.building  # each pass's copy of a block (memory_peak)
    for position, item in enumerate(items):
        flow._with_env(env).assign(node.target, item, None)
        if marked:
            run.add(UnrolledPass(position))
        with run.in_loop(Const(1)), run.loop_indices.covering(index, position, position + 1):
            env = flow._block(node.body, env)
    if marked and items:
        run.add(UnrolledPass(None))
    if index is not None:
        flow.run_.loop_indices.finish(index, flow.run_)
    if node.orelse is not None:
        env = flow._block(node.orelse.body, env)
    flow._set_env(env)
