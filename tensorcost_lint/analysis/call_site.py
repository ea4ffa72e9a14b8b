"""The record of one call site: frozen, typed, built once when the call has been read.

A string-keyed options dict shared by four layers once lost the autocast dtype of `torch.matmul`
calls (it was replaced after the dtype was put in it); each kind of knowledge now has its own field
and type, so that state cannot be made.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from .site_registry import SiteSpec


def strip_parentheses(text: str) -> str:
    """`(q @ k.T)` → `q @ k.T`, only where the outer parentheses enclose the whole expression."""
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for index, char in enumerate(text):
            depth += char == "("
            depth -= char == ")"
            if depth == 0 and index < len(text) - 1:
                return text
        text = text[1:-1].strip()
    return text


@dataclass(frozen=True)
class Precision:
    """The dtypes a site computes in, as the code states them."""

    accumulation_dtype: str | None = None  # preferred_element_type=, out_dtype=, dtype=, or a file flag
    accumulation_source: str | None = None  # where that was stated, for messages
    output_dtype: str | None = None
    autocast: str | None = None  # an enclosing `torch.autocast` block's dtype: float32 operands run in it
    tf32: str | None = None  # where the file allowed TF32 for float32 matmuls


@dataclass(frozen=True)
class EinsumOptions:
    subscripts: str | None = None  # the subscripts (or einops pattern) as written
    optimize: bool | str | None = None  # the `optimize=` keyword; None = not passed; "unknown" = not literal


@dataclass(frozen=True)
class AttentionOptions:
    layout: str  # "bhsd" or "bshd" (site_registry)
    is_causal: bool | None = None  # literal `is_causal=`; None = not passed or not literal
    enable_gqa: bool | None = None


@dataclass(frozen=True)
class MatmulChain:
    """`a @ b @ c` as Python evaluates it: a tree of leaf positions (`((0, 1), 2)`), the leaves'
    facts and their source texts."""

    tree: object
    leaves: tuple
    texts: tuple


class SourceSpan:
    """Where a site is, resolved on first use: LibCST positions re-generate a unit's code, which
    costs more than parsing it, and the text report needs positions only for findings."""

    __slots__ = ("_unit", "_node", "_position", "_expression", "order")

    def __init__(self, unit, node) -> None:
        self._unit, self._node = unit, node
        self._position = self._expression = None
        self.order = unit.line_offset  # sites sort by unit, then by recording order

    def resolve(self) -> "SourceSpan":
        if self._position is None:
            self._position = self._unit.position(self._node)
            # LibCST positions already exclude a node's own parentheses; its code does not
            self._expression = strip_parentheses(self._unit.code(self._node))
        return self

    def detach(self) -> "SourceSpan":
        """Resolve now and drop the CST (before pickling a result to another process)."""
        self.resolve()
        self._unit = self._node = None
        return self

    def __getstate__(self):
        self.detach()
        return (self._position, self._expression, self.order)

    def __setstate__(self, state) -> None:
        self._unit = self._node = None
        self._position, self._expression, self.order = state

    @property
    def position(self) -> tuple[int, int, int, int]:
        return self.resolve()._position

    @property
    def expression(self) -> str:
        return self.resolve()._expression


@dataclass(frozen=True, slots=True)
class CallSite:
    """One matmul/einsum/attention call found in the source, with what we know of its operands."""

    spec: SiteSpec  # the registry entry that recognised the call
    framework: str  # torch | numpy | jax | einops | opt_einsum
    function: str  # the callee as resolved: "torch.einsum", "@", "Tensor.matmul", "nn.Linear"
    operands: tuple  # TensorFact | None per operand
    shapes: object = None  # site_shapes.SiteShapes, or None when the operands are not all known
    precision: Precision = Precision()
    einsum: EinsumOptions | None = None
    attention: AttentionOptions | None = None
    chain: MatmulChain | None = None  # for an `@` ending a chain of three or more operands
    unresolved: str | None = None  # why operands/shapes could not be modelled
    span: SourceSpan | None = None
    id: int = -1
    # the arguments the operands were read as (a convolution's unfolded input is a view of its
    # input), one per operand: whether the backward reaches an operand is whether it reaches these
    arguments: tuple = ()

    @property
    def operation(self) -> str:
        return self.spec.operation

    @property
    def output_dtype(self) -> str | None:
        return self.precision.output_dtype

    def detach(self) -> "CallSite":
        self.span.detach()
        return self

    def numbered(self, id: int) -> "CallSite":  # noqa: A002 - the field's name
        """`dataclasses.replace(self, id=id)`, made directly: replace() walks the fields and calls
        the frozen __init__ (100,000 sites: ~0.5 s of a `check`)."""
        copy = object.__new__(type(self))
        for name in _CALL_SITE_FIELDS:
            object.__setattr__(copy, name, getattr(self, name))
        object.__setattr__(copy, "id", id)
        return copy

    @property
    def line(self) -> int:
        return self.span.position[0]

    @property
    def column(self) -> int:
        return self.span.position[1]

    @property
    def end_line(self) -> int:
        return self.span.position[2]

    @property
    def end_column(self) -> int:
        return self.span.position[3]

    @property
    def expression(self) -> str:
        return self.span.expression


_CALL_SITE_FIELDS = tuple(f.name for f in fields(CallSite))
