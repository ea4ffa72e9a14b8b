"""The analysis of one file in three parts: frozen per-file settings, per-unit state, and a recorder.

Positions are lazy: LibCST's PositionProvider re-generates the code of a whole unit, which costs
more than parsing it, while the text report and flake8 only need the positions of findings. A unit
resolves its positions the first time anything asks for one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .cst_parse import child_nodes
from .given_values import VALUE_ARGUMENTS, VALUE_TEXT
from .imports import ImportTable
from .problems import Reported


@dataclass(frozen=True)
class FileFlags:
    """File-wide switches read from assignments like `torch.backends.cuda.matmul.allow_tf32 = True`."""

    fp16_accumulation: str | None = None  # where allow_fp16_accumulation was enabled
    bf16_reduced_reduction: str | None = None
    tf32: str | None = None


@dataclass(frozen=True)
class FileSettings:
    """What every unit of one file reads and none changes."""

    path: str
    imports: ImportTable
    sizes: Mapping  # declared sizes: config, pragmas, then --dim
    default_dtype: str
    strict_broadcast: bool
    sequence_dims: tuple
    flags: FileFlags = FileFlags()
    primary_framework: str = "torch"
    aliases: Mapping = field(default_factory=dict)  # module-level type aliases: name -> ANode
    alias_strings: Mapping = field(default_factory=dict)  # id(AString) in an alias -> (unit, value node)


@dataclass(frozen=True)
class Binding:
    """A tensor name the analysis bound (a parameter, an assignment target) or looked up (a later
    use), with the fact it held there — for the editor's inlay hints and hover. Facts only, no words;
    1-based columns, end exclusive."""

    name: str
    kind: str  # "parameter" | "assignment" | "use"
    line: int
    column: int
    end_line: int
    end_column: int
    fact: object  # facts.TensorFact


class Recorder:
    """What the analysis of one file produces: call sites and reported facts, in recording order,
    and — only when asked (the language server), since each needs a position — the bindings."""

    def __init__(self, bindings: bool = False) -> None:
        self.sites: list = []
        self.reported: list = []  # problems.Reported
        self.bindings: list | None = [] if bindings else None  # Binding

    def site(self, site) -> None:
        self.sites.append(site)

    def report(self, fact, line: int, column: int) -> None:
        self.reported.append(Reported(fact, line, column))


@dataclass
class UnitContext:
    """One unit of the file (the whole file, or one function or class of it) as it is analysed: its
    own tree and lazily resolved positions, the file's settings, and where results go."""

    settings: FileSettings
    recorder: Recorder
    module: cst.Module
    line_offset: int = 0  # the unit's first line in the file, minus one (and minus a wrapper line)
    stand_ins: dict = field(default_factory=dict)  # nodes made by the analysis (`a @= b`) -> real node
    chains: dict = field(default_factory=dict)  # id(`@` node) -> its MatmulChain as written
    positions: object = None  # resolved on first use
    # (shape model, operand shapes, literal, strict) -> (the number of sizes known, its SiteShapes):
    # sites alike in all of those share one modelling (call_sites._modelled)
    shape_models: dict = field(default_factory=dict)

    def position(self, node) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column) in the file, 1-based columns."""
        if self.positions is None:
            self.positions = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        code_range = self.positions[self.stand_ins.get(node, node)]
        return (code_range.start.line + self.line_offset, code_range.start.column + 1,
                code_range.end.line + self.line_offset, code_range.end.column + 1)

    def code(self, node) -> str:
        text = self.node_code(node).strip()
        return " ".join(text.split()) if "\n" in text else text

    def node_code(self, node) -> str:
        """The node's source as written, its own parentheses included (LibCST's `code_for_node`)."""
        if type(node) in VALUE_ARGUMENTS:
            return VALUE_TEXT  # an argument passed as a value has no source of its own
        return self.module.code_for_node(node)

    def bare_code(self, node) -> str:
        """The node's source without its own parentheses: the text its position measures."""
        if type(node) in VALUE_ARGUMENTS:
            return VALUE_TEXT
        if getattr(node, "lpar", None):
            node = node.with_changes(lpar=[], rpar=[])
        return self.module.code_for_node(node)

    def children(self, node) -> list:
        """The node's child nodes in source order (what a walk for call sites descends into)."""
        return child_nodes(node)

    def bind(self, name: str, kind: str, node, fact) -> None:
        """Record a tensor binding (or use) of `name` at `node`, when the recorder keeps bindings."""
        if self.recorder.bindings is None:
            return  # no position is resolved for a binding nobody asked for
        try:
            line, column, end_line, end_column = self.position(node)
        except KeyError:
            return  # a node the analysis made itself has no place in the file to show
        self.recorder.bindings.append(Binding(name, kind, line, column, end_line, end_column, fact))

    def report(self, fact, node_or_position, offset: int = 0) -> None:
        """The one way the analysis states a problem: a typed fact at a node (or a (line, column))."""
        if isinstance(node_or_position, tuple):
            line, column = node_or_position
        else:
            line, column, _, _ = self.position(node_or_position)
        self.recorder.report(fact, line, column + offset)
