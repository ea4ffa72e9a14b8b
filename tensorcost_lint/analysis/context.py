"""Per-file state shared by the analysis passes, and the records they produce."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .facts import TensorFact
from .imports import ImportTable
from .site_shapes import SiteShapes


@dataclass
class Diagnostic:
    """A finding the analysis itself raises (TCL001 parse errors, TCL002 contradictions)."""

    code: str
    line: int  # 1-based
    column: int  # 1-based
    message: str


@dataclass
class CallSite:
    """One matmul/einsum/attention call found in the source, with what we know of its operands."""

    line: int
    column: int
    end_line: int
    end_column: int
    operation: str  # matmul | einsum | attention | linear | dot_general
    framework: str  # torch | numpy | jax | einops | opt_einsum
    function: str  # the callee as resolved: "torch.einsum", "@", "Tensor.matmul", "nn.Linear"
    expression: str
    operands: tuple  # TensorFact | None per operand
    shapes: SiteShapes | None = None
    accumulation_dtype: str | None = None  # stated by the code (preferred_element_type, flags)
    accumulation_source: str | None = None  # where that statement was made, for messages
    output_dtype: str | None = None
    options: dict = field(default_factory=dict)  # subscripts, optimize, is_causal, path, ...
    unresolved: str | None = None  # why operands/shapes could not be modelled
    node: object = field(default=None, repr=False, compare=False)
    id: int = -1


@dataclass
class FileFlags:
    """File-wide switches read from assignments like `torch.backends.cuda.matmul.allow_tf32 = True`."""

    fp16_accumulation: str | None = None  # where allow_fp16_accumulation was enabled
    bf16_reduced_reduction: str | None = None
    tf32: str | None = None


@dataclass
class FileContext:
    path: str
    module: cst.Module
    positions: object  # Mapping[CSTNode, CodeRange]
    imports: ImportTable
    sizes: dict
    default_dtype: str
    strict_broadcast: bool
    sequence_dims: tuple
    aliases: dict = field(default_factory=dict)  # module-level type aliases: name -> ANode
    flags: FileFlags = field(default_factory=FileFlags)
    sites: list = field(default_factory=list)
    diagnostics: list = field(default_factory=list)
    primary_framework: str = "torch"
    autocast: str | None = None  # dtype of an enclosing `torch.autocast` block
    extra_positions: dict = field(default_factory=dict)  # nodes made by the analysis (`a @= b`)

    def position(self, node) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column), 1-based columns, of a node."""
        code_range = self.extra_positions.get(node) or self.positions[node]
        return (code_range.start.line, code_range.start.column + 1, code_range.end.line, code_range.end.column + 1)

    def code(self, node) -> str:
        text = self.module.code_for_node(node).strip()
        return " ".join(text.split()) if "\n" in text else text

    def diagnose(self, code: str, node_or_position, message: str, offset: int = 0) -> None:
        if isinstance(node_or_position, tuple):
            line, column = node_or_position
        else:
            line, column, _, _ = self.position(node_or_position)
        self.diagnostics.append(Diagnostic(code, line, column + offset, message))


def tensor_operands(site: CallSite) -> list[TensorFact] | None:
    if any(type(op) is not TensorFact or op.shape is None for op in site.operands):
        return None
    return list(site.operands)
