"""Arguments a call receives as values rather than as expressions (issue 20: arguments evaluated
once, dispatched as values). The interpreter's call protocol reads a call's arguments through
`CallArgs`; where the caller already holds the values, it passes one of these, and `eval` returns
the value itself — no name planted in the env, no CST node built, nothing evaluated twice.

- `Given`: evaluated by the caller just now (a linear module's input, the running value of an
  `nn.Sequential`): the caller's evaluation made every record, so nothing observes it again.
- `Bound`: computed earlier and read again here (a partial's bound arguments, a choice of callees
  fed the same arguments, `filter`'s items, an autograd function's `apply`): a whole-model run
  observes the read as it observes a name's (what the value holds is live here, and its gradient
  flows into the call)."""

from __future__ import annotations


class Given:
    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value


class Bound:
    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value


VALUE_ARGUMENTS = (Given, Bound)
# the text a value argument stands for where a message quotes an argument's code
VALUE_TEXT = "<value>"
