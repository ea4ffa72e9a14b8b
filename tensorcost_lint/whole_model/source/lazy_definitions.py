"""Each top-level definition of a whole-model run's files given its LibCST tree only when the run
first reaches it (LazyDefinitions), and the positions of its nodes only when one is asked for
(TreeFileContext). A model touches a few definitions of files such as transformers'
`modeling_utils.py` (5,000 lines, 1.6 s for LibCST to parse whole): the tree is built from the
stdlib one already parsed (analysis/ast_front.py: no second parse, positions from the file's text
in O(1), ~20 µs a statement); a definition holding a construct it does not build is parsed by
LibCST, to MAX_DEFINITION_LINES, and shared across the runs of this process (parse_piece).

Apart from source_tree.py, which reads each file once and follows its imports: this module is what
a definition costs once it is reached, bounded in lines parsed and lines held."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ...analysis.ast_front import convert_definition
from ...analysis.ast_positions import AstUnitContext, SourceText
from ...analysis.cst_parse import parse_module
from ...analysis.context import UnitContext
from ..values.inheritance import last_method
from ..values.source_error import SourceError, StackExhausted


@dataclass
class TreeFileContext(UnitContext):
    """One file's context in a whole-model run: its nodes come from several separately parsed
    definitions, each with its own lines; a position is looked up in the definition holding it."""

    pieces: list = field(default_factory=list)  # [module, line_offset, ParsedPiece]
    # The definitions built from the stdlib tree (analysis/ast_front.py), all in one context: their
    # positions and code come from the file's text in O(1), with no LibCST parse or position pass.
    built: AstUnitContext | None = None

    unresolved: list = field(default_factory=list)  # pieces whose positions are not in `found` yet
    found: dict = field(default_factory=dict)  # node -> (line offset, CodeRange) of every resolved piece

    def add_piece(self, module: cst.Module, line_offset: int) -> None:
        piece = [module, line_offset, _PARSED.get(id(module)) or ParsedPiece(module)]
        self.pieces.append(piece)
        self.unresolved.append(piece)

    def add_built(self, unit: AstUnitContext) -> None:
        """Join a definition's context from ast_front to the file's (only once it built whole, so
        no id of a discarded node stays behind)."""
        built = self.built
        if built is None:
            self.built = unit
            unit.stand_ins = self.stand_ins
            return
        built.origins.update(unit.origins)
        built.fixed.update(unit.fixed)
        built.sole_arguments |= unit.sole_arguments
        built.name_only |= unit.name_only
        built.statements.extend(unit.statements)

    def _built_for(self, node) -> AstUnitContext | None:
        built = self.built
        if built is None:
            return None
        key = self.stand_ins.get(node, node) if self.stand_ins else node
        return built if key in built.origins or key in built.fixed else None

    def node_code(self, node) -> str:
        built = self._built_for(node)
        return built.node_code(node) if built is not None else super().node_code(node)

    def bare_code(self, node) -> str:
        built = self._built_for(node)
        return built.bare_code(node) if built is not None else super().bare_code(node)

    def position(self, node) -> tuple[int, int, int, int]:
        """O(1) per lookup: each piece's positions are resolved once, on the first lookup that
        needs them, and merged into one table (a file of 33,000 definitions is 33,000 pieces)."""
        built = self._built_for(node)
        if built is not None:
            return built.position(node)
        node = self.stand_ins.get(node, node)
        hit = self.found.get(node)
        while hit is None and self.unresolved:
            piece = self.unresolved.pop()  # the newest first: a lookup is mostly of what was just parsed
            offset = piece[1]
            for key, code_range in piece[2].resolved().items():
                self.found[key] = (offset, code_range)
            hit = self.found.get(node)
        if hit is None:
            raise KeyError(node)
        offset, code_range = hit
        return (code_range.start.line + offset, code_range.start.column + 1,
                code_range.end.line + offset, code_range.end.column + 1)


class ParsedPiece:
    """One definition's text parsed by LibCST, and its node positions once asked for (regenerating
    a 500-line method's code for them costs more than parsing it)."""

    __slots__ = ("module", "positions")

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.positions = None

    def resolved(self):
        if self.positions is None:
            self.positions = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self.positions


# Definitions parsed in this process, by file, line and exact text: the runs of one `tensorcost model`
# (inference and training of one entry, several entries over one package) read the same methods,
# and LibCST trees are immutable, so a run reuses another's tree and positions. Bounded by lines
# held (a parsed line costs ~13 KB: 8,000 lines ~100 MB); the oldest entries go first.
MAX_PARSED_LINES = 8000
_BY_TEXT: dict = {}  # (path, first line, text) -> ParsedPiece: equal methods of two classes stay two trees
_PARSED: dict = {}  # id(module) -> ParsedPiece, for the modules held in _BY_TEXT
_held_lines = [0]


def parse_piece(text: str, path: str, first: int) -> cst.Module:
    """`cst.parse_module(text)` of the definition at `first` in `path`, shared across the runs of
    this process (same errors raised)."""
    key = (path, first, text)
    found = _BY_TEXT.get(key)
    if found is not None:
        return found.module
    module = parse_module(text)
    lines = text.count("\n") + 1
    if lines > MAX_PARSED_LINES:
        return module
    while _BY_TEXT and _held_lines[0] + lines > MAX_PARSED_LINES:
        oldest = next(iter(_BY_TEXT))
        evicted = _BY_TEXT.pop(oldest, None)
        if evicted is not None:
            _PARSED.pop(id(evicted.module), None)
            _held_lines[0] -= oldest[2].count("\n") + 1
    _held_lines[0] += lines
    piece = ParsedPiece(module)
    _BY_TEXT[key] = piece
    _PARSED[id(module)] = piece
    return module


# A definition LibCST parses (one holding a construct ast_front does not build) is parsed up to this
# many lines (LibCST takes ~0.4 ms and ~30 KB a line): the statements past it are not analysed, and
# the cut is listed. Real methods stay under 1,000. Definitions ast_front builds are read whole.
MAX_DEFINITION_LINES = 5000


def _kept_end(body: list, limit: int):
    """(last line to keep, (line, column) of the first statement dropped or None): the statements
    of `body` that end by line `limit`, cutting into a def or class that crosses it."""
    end = None
    for statement in body:
        if statement.end_lineno <= limit:
            end = statement.end_lineno
            continue
        inner = getattr(statement, "body", None)
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and inner \
                and inner[0].lineno <= limit:
            inner_end, cut = _kept_end(inner, limit)
            if inner_end is not None:
                return inner_end, cut
        return end, (statement.lineno, statement.col_offset + 1)
    return end, None


# A function this long lets go of its stdlib body once its LibCST tree is built (the built tree keeps
# only places): the stdlib tree of a 100,000-line forward is ~250 MB held beside the LibCST one.
# Real methods stay under 1,000 lines, so they never pay the re-parse a later reader would cost.
RELEASE_LINES = 2000


def _long_functions(statement) -> list:
    """`statement` or the methods of a class `statement` that are RELEASE_LINES long or longer."""
    candidates = statement.body if isinstance(statement, ast.ClassDef) else [statement]
    return [s for s in candidates if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
            and type(s.body) is list and s.end_lineno - s.lineno + 1 >= RELEASE_LINES]


class ReleasedBody(list):
    """A long function's stdlib body, let go once its LibCST tree is built and parsed again from
    the file's lines if anything reads it later (a registry's decorator check, a class built whole
    after one of its methods): readers see the same statements, at the same lines and columns."""

    __slots__ = ("_lines", "_function", "_restored")

    def __init__(self, lines: list, function) -> None:
        super().__init__()
        self._lines, self._function, self._restored = lines, function, False

    def _restore(self) -> None:
        if self._restored:
            return
        self._restored = True
        function = self._function
        text = "".join(self._lines[function.lineno - 1:function.end_lineno])
        if function.col_offset:  # a method: its lines keep their indentation inside a class header
            parsed = ast.parse("class _:\n" + text).body[0].body[0]
            ast.increment_lineno(parsed, function.lineno - 2)
        else:
            parsed = ast.parse(text).body[0]
            ast.increment_lineno(parsed, function.lineno - 1)
        list.extend(self, parsed.body)

    def __iter__(self):
        self._restore()
        return list.__iter__(self)

    def __len__(self) -> int:
        self._restore()
        return list.__len__(self)

    def __getitem__(self, index):
        self._restore()
        return list.__getitem__(self, index)

    def __reversed__(self):
        self._restore()
        return list.__reversed__(self)

    def __bool__(self) -> bool:
        return True  # a function's body is never empty


class LazyDefinitions(Mapping):
    """top-level name -> cst.ClassDef | cst.FunctionDef, parsed on first access."""

    def __init__(self, lines: list, spans: dict, ctx: TreeFileContext, classes: dict | None = None) -> None:
        self.classes = classes if classes is not None else {}  # name -> ast.ClassDef
        self.lines = lines
        self.spans = spans  # name -> (first line, last line), decorators included
        self.ctx = ctx
        self.parsed: dict = {}
        self.source: SourceText | None = None  # the file's text for ast_front; None: LibCST parses all
        self.statements: dict = {}  # name -> its ast statement
        self.cuts: list = []  # (path, line, column, what, reason): definitions read only in part

    def _bounded_end(self, node, first: int, last: int, what: str) -> int:
        """`last`, or an earlier line ending a statement when the definition is too long to parse."""
        if node is None or last - first + 1 <= MAX_DEFINITION_LINES:
            return last
        end, cut = _kept_end([node], first + MAX_DEFINITION_LINES - 1)
        if end is None or cut is None:
            return last
        self.cuts.append((self.ctx.settings.path, cut[0], cut[1], what,
                          f"{what} has {last - first + 1:,} lines; statements past its first "
                          f"{MAX_DEFINITION_LINES:,} are not analysed (bounded work) and the total is partial"))
        return end

    def _build(self, statement):
        """The LibCST definition built from its stdlib `statement` by ast_front, whole (the work
        budget bounds what a run reads of it), or None: a construct it does not build, which
        LibCST parses, to MAX_DEFINITION_LINES."""
        if statement is None or self.source is None:
            return None
        long = _long_functions(statement)
        try:
            unit, definition = convert_definition(self.ctx.settings, self.ctx.recorder, self.source, statement,
                                                  tuple(long))
        except Exception:  # noqa: BLE001 - Unsupported, or anything unforeseen: LibCST decides, as before
            return None
        finally:  # a long body was let go of as it was built (whole or in part): read again on demand
            for function in long:
                function.body = ReleasedBody(self.lines, function)
        self.ctx.add_built(unit)
        return definition

    def __getitem__(self, name: str):
        if name in self.parsed:
            return self.parsed[name]
        first, last = self.spans[name]  # KeyError for a name that is not defined here
        built = self._build(self.statements.get(name))
        if built is not None:
            self.parsed[name] = built
            return built
        last = self._bounded_end(self.statements.get(name), first, last, name)
        try:
            module = parse_piece("".join(self.lines[first - 1:last]), self.ctx.settings.path, first)
        except (cst.ParserSyntaxError, RecursionError) as error:
            kind = StackExhausted if isinstance(error, RecursionError) else SourceError
            raise kind(f"{self.ctx.settings.path}:{first}: {name} cannot be analysed: "
                       f"{str(error).splitlines()[0][:200]}") from None
        definition = next(s for s in module.body if isinstance(s, (cst.ClassDef, cst.FunctionDef)))
        self.ctx.add_piece(module, first - 1)
        self.parsed[name] = definition
        return definition

    def method(self, class_name: str, name: str):
        """One method of a top-level class, parsed alone (inside a one-line class header, so its
        columns stay those of the file): the last definition of `name`, as Python binds it."""
        key = (class_name, name)
        if key in self.parsed:
            return self.parsed[key]
        if class_name in self.parsed:
            found = last_method(self.parsed[class_name], name)
            self.parsed[key] = found
            return found
        found = None
        for statement in self.classes[class_name].body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name:
                found = statement
        if found is None or found.col_offset != 4:
            return None
        first = min([found.lineno] + [d.lineno for d in found.decorator_list])
        built = self._build(found)
        if built is not None:
            self.parsed[key] = built
            return built
        end = self._bounded_end(found, first, found.end_lineno, f"{class_name}.{name}")
        text = "class _:\n" + "".join(self.lines[first - 1:end])
        try:
            module = parse_piece(text, self.ctx.settings.path, first)
        except (cst.ParserSyntaxError, RecursionError):
            return None
        method = next(s for s in module.body[0].body.body if isinstance(s, cst.FunctionDef))
        self.ctx.add_piece(module, first - 2)
        self.parsed[key] = method
        return method

    def __iter__(self):
        return iter(self.spans)

    def __len__(self) -> int:
        return len(self.spans)
