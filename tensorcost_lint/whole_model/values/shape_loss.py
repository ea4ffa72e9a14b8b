"""Where each shape was lost (Contract 7a's `shape_lost_at`): the first operation whose result has
no known shape although every tensor it read had one.

Every expression the whole-model evaluator computes passes through `evaluating`: a tensor of
unknown shape either inherits the record of the first unknown tensor among the sub-expressions it
was computed from, or — when all of those were known — is where the shape was lost, recorded with
the operation's location, its expression shortened to the callee, and why. The record travels with
the value (keyed by the value object, which the run keeps alive), so a mask lost deep in a library
helper is still named at the matmul three calls later that cannot be costed."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import libcst as cst

from ...analysis.facts import TensorFact

MAX_EXPRESSION = 80


@dataclass(frozen=True)
class LostAt:
    path: str
    line: int
    expression: str
    reason: str

    def as_json(self, relative) -> dict:
        return {"path": relative(self.path), "line": self.line, "expression": self.expression, "reason": self.reason}


class ShapeLoss:
    def __init__(self) -> None:
        self.tags: dict = {}  # id(tensor fact) -> (fact, LostAt): the fact kept so its id stays its own
        self.frames: list = []  # per expression being evaluated: the first loss among its parts

    @contextmanager
    def evaluating(self):
        """Around one expression's evaluation; `settle` names the result's loss."""
        self.frames.append(None)
        try:
            yield
        finally:
            self.frames.pop()

    def settle(self, ctx, node, fact, why=None) -> None:
        """After `node` evaluated to `fact` (inside `evaluating`): tag a shapeless tensor with where
        its shape was lost and pass the loss to the enclosing expression."""
        if not lost_shape(fact):
            # a tuple or a call's arguments pass a part's loss on (`torch.cat((freqs, freqs))`)
            if len(self.frames) >= 2 and self.frames[-2] is None:
                self.frames[-2] = self.frames[-1]
            return
        lost = self.of(fact) or self.frames[-1]
        if lost is None:
            line = _line(ctx, node)
            if line is None:  # a name the run made up to pass a value: the real expression around it says
                return
            reason = (why(node) if why is not None else None) or _reason(node)
            lost = LostAt(ctx.settings.path, line, short_expression(ctx, node), reason)
        self.tags.setdefault(id(fact), (fact, lost))
        if len(self.frames) >= 2 and self.frames[-2] is None:
            self.frames[-2] = lost

    def merged(self, ctx, node: cst.If, a: dict, b: dict, merged: dict) -> None:
        """After an undecided `if`: a name whose sides left tensors of different shapes lost its
        shape there, unless a side had lost it already."""
        for name, value in merged.items():
            if not lost_shape(value) or self.of(value) is not None:
                continue
            lost = self.of(a.get(name)) or self.of(b.get(name))
            if lost is None:
                condition = short_expression(ctx, node.test)
                lost = LostAt(ctx.settings.path, ctx.position(node)[0], f"if {condition}",
                              f"`{name}` has a different shape on each side of an undecided condition")
            self.tags[id(value)] = (value, lost)

    def of(self, fact) -> LostAt | None:
        tagged = self.tags.get(id(fact))
        return tagged[1] if tagged is not None and tagged[0] is fact else None

    def for_operands(self, operands) -> LostAt | None:
        """The loss of the first shapeless operand of a site, else the loss among the parts of the
        expression being evaluated (an operand that is no value at all)."""
        for operand in operands:
            lost = self.of(operand)
            if lost is not None:
                return lost
        return self.frames[-1] if self.frames else None


def _line(ctx, node) -> int | None:
    try:
        return ctx.position(node)[0]
    except KeyError:  # not in the parsed source
        return None


def lost_shape(fact) -> bool:
    return type(fact) is TensorFact and fact.shape is None


def short_expression(ctx, node) -> str:
    """The expression as one line, a call shortened to its callee (`mask_interface(...)`)."""
    if isinstance(node, cst.Call):
        text = " ".join(ctx.code(node.func).split()) + "(...)"
    else:
        text = " ".join(ctx.code(node).split())
    return text if len(text) <= MAX_EXPRESSION else text[:MAX_EXPRESSION - 1] + "…"


def _reason(node) -> str:
    if isinstance(node, cst.Call):
        return "the call's result has no shape the analysis can read (its code or shape rule gives none)"
    if isinstance(node, cst.Name):
        return "the name has no known shape here (a parameter not in `inputs`, or bound outside the code read)"
    if isinstance(node, (cst.Subscript, cst.Attribute)):
        return "indexing or the attribute gives no known shape"
    return "the operation gives no known shape from its operands' shapes"
