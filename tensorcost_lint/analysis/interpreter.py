"""The interpreter protocol: what the transfer tables (tensor_functions, tensor_methods, indexing,
calls) and the site recorders (call_sites) may ask of the evaluator that calls them.

They receive it as an argument and never import the evaluator, so recursion (an operand that is
itself a call) goes through this protocol and every module imports only downward:
values/facts → transfer tables → sites → flow (evaluator, function_flow, file_analysis).
"""

from __future__ import annotations

from typing import Protocol

# What `call_code` returns when it leaves a call to the transfer tables.
UNHANDLED = object()


class Interpreter(Protocol):
    ctx: object  # context.UnitContext: the unit's settings, positions and recorder
    env: dict  # name -> fact
    autocast: str | None  # the dtype of an enclosing `torch.autocast` block

    def eval(self, node):
        """The fact of an expression, recording every call site inside it (None: unknown)."""

    def walk(self, node) -> None:
        """Evaluate every sub-expression for its call sites, discarding the facts."""

    def dim_of(self, node):
        """A dim from an expression used as a size, or None."""

    def attribute_of(self, receiver, name: str):
        """The fact of `receiver.name`."""

    def module_parameter(self, module, name: str, shape: tuple, dtype):
        """The parameter `name` of a torch module as its call reads it (a TensorFact of `shape`)."""

    def call_code(self, node, args, name):
        """A call of code the analysis reads interprocedurally (a whole-model run: user modules,
        functions of the tree); UNHANDLED leaves it to the transfer tables. `name`: the callee as
        the imports resolve it, or None."""
