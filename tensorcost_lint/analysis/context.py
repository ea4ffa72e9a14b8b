"""Per-file state shared by the analysis passes, and the records they produce.

Positions are lazy: LibCST's PositionProvider re-generates the code of a whole unit, which costs
more than parsing it, while the text report and flake8 only need the positions of findings. A unit
resolves its positions the first time anything asks for one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .imports import ImportTable
from .problems import Reported


@dataclass
class FileFlags:
    """File-wide switches read from assignments like `torch.backends.cuda.matmul.allow_tf32 = True`."""

    fp16_accumulation: str | None = None  # where allow_fp16_accumulation was enabled
    bf16_reduced_reduction: str | None = None
    tf32: str | None = None


@dataclass
class FileContext:
    path: str
    module: cst.Module  # the unit being analysed (the whole file, or one function of it)
    imports: ImportTable
    sizes: dict
    default_dtype: str
    strict_broadcast: bool
    sequence_dims: tuple
    aliases: dict = field(default_factory=dict)  # module-level type aliases: name -> ANode
    alias_strings: dict = field(default_factory=dict)  # id(AString) in an alias -> (ctx, value node)
    flags: FileFlags = field(default_factory=FileFlags)
    sites: list = field(default_factory=list)
    diagnostics: list = field(default_factory=list)
    primary_framework: str = "torch"
    autocast: str | None = None  # dtype of an enclosing `torch.autocast` block
    stand_ins: dict = field(default_factory=dict)  # nodes made by the analysis (`a @= b`) -> real node
    line_offset: int = 0  # the unit's first line in the file, minus one (and minus a wrapper line)
    chains: dict = field(default_factory=dict)  # id(`@` node) -> its chain as written (tree, leaves, texts)
    positions: object = None  # resolved on first use

    def for_unit(self, module: cst.Module, line_offset: int) -> "FileContext":
        """A context for one unit of the file: its own tree and positions, the file's shared records."""
        from dataclasses import replace

        return replace(self, module=module, line_offset=line_offset, positions=None, stand_ins={}, autocast=None,
                       chains={})

    def position(self, node) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column) in the file, 1-based columns."""
        if self.positions is None:
            self.positions = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        code_range = self.positions[self.stand_ins.get(node, node)]
        return (code_range.start.line + self.line_offset, code_range.start.column + 1,
                code_range.end.line + self.line_offset, code_range.end.column + 1)

    def code(self, node) -> str:
        text = self.module.code_for_node(node).strip()
        return " ".join(text.split()) if "\n" in text else text

    def report(self, fact, node_or_position, offset: int = 0) -> None:
        """The one way the analysis states a problem: a typed fact at a node (or a (line, column))."""
        if isinstance(node_or_position, tuple):
            line, column = node_or_position
        else:
            line, column, _, _ = self.position(node_or_position)
        self.diagnostics.append(Reported(fact, line, column + offset))
