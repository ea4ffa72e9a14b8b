"""The files of a whole-model run: each read once with the stdlib parser (settings, imports,
constants, where each top-level definition lies), and each definition the run reaches given its
LibCST tree only then — a model touches a few definitions of files such as transformers'
`modeling_utils.py` (5,000 lines, 1.6 s for LibCST to parse whole). The tree is built from the
stdlib one already parsed (analysis/ast_front.py: no second parse, positions from the file's text in
O(1), ~20 µs a statement); a definition holding a construct it does not build is parsed by LibCST."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from shape_annotations import merge_dim_bindings

from ..analysis.ast_front import convert_definition
from ..analysis.ast_positions import AstUnitContext, SourceText
from ..analysis.cst_parse import parse_module
from ..analysis.context import FileSettings, Recorder, UnitContext
from ..analysis.file_analysis import _primary_framework, read_flags, read_pragmas
from ..analysis.imports import import_table_from_ast
from ..bounded_read import read_capped
from ..source_lines import source_lines
from .dim_reads import recorded_like
from .inheritance import last_method
from . import module_bindings
from .installed_source import import_roots, not_found_reason, searched_in_site

# A file a whole-model run reads: the stdlib tree alone takes ~200 bytes per source byte (a 2.3 MB
# forward of 100,000 statements: 485 MB), so the cap keeps a run's memory bounded; the largest file
# of transformers (modeling_utils.py) is 280 KB.
MAX_SOURCE_BYTES = 2**20
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")  # lines as the stdlib parser counts them
MAX_FILES = 2000
# `from .a import x` where a.py re-exports x from b.py, and so on: files followed for one name. A
# chain longer than this is listed as not followed (its cost is unknown), never silently dropped.
MAX_IMPORT_HOPS = 64


class SourceError(Exception):
    """An entry that cannot be read: one line naming the file and the reason (exit 2)."""


class StackExhausted(SourceError):
    """A definition LibCST could not parse because Python's stack ran out (RecursionError): code
    nested deeply, or a definition first read many calls deep in the run; a call the run makes
    lists it at that call instead of failing the model."""


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
        key = id(self.stand_ins.get(node, node))
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
        try:
            unit, definition = convert_definition(self.ctx.settings, self.ctx.recorder, self.source, statement)
        except Exception:  # noqa: BLE001 - Unsupported, or anything unforeseen: LibCST decides, as before
            return None
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


@dataclass
class SourceFile:
    path: Path
    ctx: UnitContext
    definitions: Mapping  # top-level name -> cst.ClassDef | cst.FunctionDef (LazyDefinitions)
    from_imports: dict = field(default_factory=dict)  # local name -> (level, module, name)
    constants: dict = field(default_factory=dict)  # top-level `NAME = 3` -> int
    values: dict = field(default_factory=dict)  # top-level `NAME = Call(...)` / `NAME = {...}` -> ast value
    classes: dict = field(default_factory=dict)  # top-level class name -> ast.ClassDef
    module_imports: dict = field(default_factory=dict)  # `import a.b as c`: c -> "a.b"; `import a.b`: a -> "a"
    star_imports: list = field(default_factory=list)  # `from .m import *`: (level, module)
    aliases: dict = field(default_factory=dict)  # top-level `helper = _h` -> "_h" (module_bindings)
    assigned: dict = field(default_factory=dict)  # other top-level `name = ...` -> line (module_bindings)


class SourceTree:
    """Parses each file once per run."""

    def __init__(self, root: Path, config, cli_dims: dict, recorder: Recorder, confinement=None) -> None:
        self.root = root
        self.confinement = confinement  # confinement.Confinement: the only files a run may read
        self.config = config
        self.cli_dims = cli_dims
        self.recorder = recorder
        self.files: dict[Path, SourceFile | None] = {}
        self.unified_dims: dict = {}  # name -> size a running program must have (dim_unification)
        self.unreadable: dict = {}  # path -> why it could not be read (said again when it is reached again)
        self.failures: dict = {}  # (file path, name) -> why the name's import could not be followed
        self.virtual: set = set()  # paths of modules given as text (load_text), in no file on disk
        self._modules: dict = {}  # (file path, name) -> the SourceFile a module name means, or None
        # Contract 7a: absolute imports are also looked for in `source_roots` and the site folders
        self.source_roots, self.site_folders = import_roots(config)
        self.site_setting = getattr(config, "site_packages", "none")

    def load(self, path: Path) -> SourceFile:
        path = path.resolve()
        if path in self.files:
            cached = self.files[path]
            if cached is None:
                raise SourceError(self.unreadable.get(path, f"{path}: could not be parsed"))
            return cached
        if len(self.files) >= MAX_FILES:
            raise SourceError(f"{path}: more than {MAX_FILES} files reached; refused")
        if self.confinement is not None and not self.confinement.allows(path):
            raise SourceError(f"{path}: outside the project root (reading it needs its directory in `source_roots`)")
        self.files[path] = None
        try:
            text = read_capped(path, MAX_SOURCE_BYTES).decode("utf-8-sig")
            tree = ast.parse(text)
        except FileNotFoundError:
            self.unreadable[path] = f"{path}: file not found"
            raise SourceError(self.unreadable[path]) from None
        except (OSError, UnicodeDecodeError, SyntaxError, RecursionError, ValueError) as error:
            self.unreadable[path] = f"{path}: cannot be analysed: {(str(error).splitlines() or [''])[0][:200]}"
            raise SourceError(self.unreadable[path]) from None
        return self._indexed(path, text, tree)

    def bind_dim(self, name: str, size: int) -> None:
        """An unsized dim unified with a size (dim_unification): every file read, and those read later,
        see it, unless a file declares the name itself."""
        self.unified_dims[name] = size
        for source in self.files.values():
            if source is not None:
                source.ctx.settings.sizes.setdefault(name, size)

    def load_text(self, path: Path, text: str) -> SourceFile:
        """A module that exists only as text (a `build:` expression's module, build_entry.py), as if
        it were the file `path`: its imports resolve from that file's folder."""
        source = self._indexed(path, text, ast.parse(text))
        self.virtual.add(path)
        return source

    def _indexed(self, path: Path, text: str, tree: ast.Module) -> SourceFile:
        imports = import_table_from_ast(tree)
        sizes = recorded_like(self.config.dims, merge_dim_bindings(self.config.dims, read_pragmas(text, Recorder()),
                                                                   self.cli_dims))
        for name, size in self.unified_dims.items():
            sizes.setdefault(name, size)
        settings = FileSettings(
            path=str(path), imports=imports, sizes=sizes, default_dtype=self.config.default_dtype,
            strict_broadcast=self.config.broadcast_policy == "strict", sequence_dims=tuple(self.config.sequence_dims),
            flags=read_flags(tree, imports, text), primary_framework=_primary_framework(imports))
        ctx = TreeFileContext(settings, self.recorder, cst.Module([]))
        spans = {}
        for statement in tree.body:
            if isinstance(statement, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([statement.lineno] + [d.lineno for d in statement.decorator_list])
                spans[statement.name] = (first, statement.end_lineno)
        source = SourceFile(path, ctx, LazyDefinitions(_LINE.findall(text), spans, ctx))
        source.definitions.source = SourceText(text, source_lines(text, keepends=True))
        source.definitions.statements = {s.name: s for s in tree.body
                                         if isinstance(s, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
        source.definitions.classes = source.classes
        for statement in _guarded_imports(tree.body):  # `if TYPE_CHECKING: from .peft import Mixin` (lazy modules)
            for alias in statement.names if isinstance(statement, ast.ImportFrom) and statement.level else ():
                if alias.name != "*":
                    source.from_imports.setdefault(alias.asname or alias.name,
                                                   (statement.level, statement.module, alias.name))
        for statement in tree.body:
            if isinstance(statement, ast.ImportFrom) and statement.module != "__future__":
                for alias in statement.names:
                    if alias.name == "*":
                        source.star_imports.append((statement.level, statement.module))
                    else:
                        source.from_imports[alias.asname or alias.name] = (statement.level, statement.module,
                                                                            alias.name)
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    source.module_imports[alias.asname or alias.name.split(".")[0]] = \
                        alias.name if alias.asname else alias.name.split(".")[0]
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name) \
                    and type(getattr(statement.value, "value", None)) is int:
                source.constants[statement.targets[0].id] = statement.value.value
            elif isinstance(statement, ast.ClassDef):
                source.classes[statement.name] = statement
            if isinstance(statement, (ast.Assign, ast.AnnAssign)) and isinstance(statement.value, (ast.Call, ast.Dict)):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Name):
                    source.values[targets[0].id] = statement.value
        module_bindings.record(source, tree.body)
        self.files[path] = source
        return source

    def module_file(self, importer: Path, level: int, module: str | None) -> Path | None:
        """The file of `from .module import x` (level 1) or `from pkg.module import x` in the tree."""
        parts = module.split(".") if module else []
        bases = [importer.parent] if level == 0 else []
        if level:
            base = importer.parent
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        else:  # `from pkg.module import x`: pkg beside the importer, above it (its own package), or at the root
            bases = list(dict.fromkeys([*list(importer.parents)[:6], self.root, *list(self.root.parents)[:3],
                                        *map(Path, self.source_roots)]))
            if parts and searched_in_site(parts[0]):
                bases.extend(Path(folder) for folder in self.site_folders if Path(folder) not in bases)
        if parts and not level and not searched_in_site(parts[0]) and self.site_folders:
            # torch, numpy, ...: modelled by the analysis's tables, never read from an installed copy
            bases = [base for base in bases if not any(_inside(base, folder) for folder in self.site_folders)]
        for base in bases:
            candidate = base.joinpath(*parts) if parts else base
            for file in (candidate.with_suffix(".py") if parts else None, candidate / "__init__.py"):
                if file is not None and file.is_file() and (self.confinement is None or self.confinement.allows(file)):
                    return file
        return None

    def definition(self, source: SourceFile, name: str):
        """(file, definition) that `name` means in `source`: its own, or one it imports from the tree."""
        return self._follow(source, name, lambda file, n: file.definitions.get(n), stop_at_definitions=False)

    def global_value(self, source: SourceFile, name: str):
        """(file, ast value) of a top-level `name = Call(...)` or `name = {...}` that `name` means in
        `source`: its own, or one it imports from the tree."""
        return self._follow(source, name, lambda file, n: file.values.get(n), stop_at_definitions=True)

    def class_ast(self, source: SourceFile, name: str):
        """(file, ast.ClassDef) of the class `name` means in `source`."""
        return self._follow(source, name, lambda file, n: file.classes.get(n), stop_at_definitions=False)

    def module_named(self, source: SourceFile, name: str) -> SourceFile | None:
        """The file of the module `name` means in `source`: `from . import c`, `from pkg import c`,
        `import pkg.c as c` or `import pkg` (the tree's own modules only); why not, in `failures`."""
        key = (source.path, name)
        if key not in self._modules:
            self._modules[key] = None
            if name in source.from_imports:
                level, module, imported = source.from_imports[name]
                dotted, file = ".".join(p for p in (module, imported) if p), None
                if self._follow(source, name, lambda f, n: f.definitions.get(n), stop_at_definitions=False) is None:
                    file = self.module_file(source.path, level, dotted)
            elif name in source.module_imports:
                file = self.module_file(source.path, 0, source.module_imports[name])
            else:
                file = None
            if file is None and name in source.from_imports:  # `from .sub import c`, sub re-exporting module c
                self._modules[key] = module_bindings.reexported_module(self, source, name)
                return self._modules[key]
            if file is not None:
                self.failures.pop(key, None)
                self._modules[key] = self._load_for(source, name, file)
        return self._modules[key]

    def submodule(self, package: SourceFile, name: str) -> SourceFile | None:
        """`pkg.c` for the package file `pkg/__init__.py`: the file of its submodule `c`."""
        if package.path.name != "__init__.py":
            return None
        file = self.module_file(package.path, 1, name)
        return None if file is None else self._load_for(package, name, file)

    def _load_for(self, source: SourceFile, name: str, file: Path) -> SourceFile | None:
        try:
            return self.load(file)
        except SourceError as error:
            self.failures[(source.path, name)] = str(error)
            return None

    def _follow(self, source: SourceFile, name: str, own, stop_at_definitions: bool, hops: int = MAX_IMPORT_HOPS,
                seen: set | None = None):
        """(file, what `own(file, name)` finds) in `source` or through its `from … import` chain and
        star imports, at most MAX_IMPORT_HOPS files deep; a chain that breaks on the way (a file
        missing, unreadable, outside the project, past a limit) leaves its reason in `failures`."""
        seen = set() if seen is None else seen
        if (source.path, name) in seen:
            return None  # a re-export loop
        seen.add((source.path, name))
        found = own(source, name)
        if found is not None:
            return source, found
        if stop_at_definitions and name in source.definitions:
            return None
        if name in source.aliases and hops:  # `helper = _h`: the name it copies, in the same file
            return self._follow(source, source.aliases[name], own, stop_at_definitions, hops - 1, seen)
        imported = source.from_imports.get(name)
        targets = [imported] if imported is not None else [(level, module, name) for level, module in source.star_imports]
        for level, module, imported_name in targets:
            if hops == 0:
                self.failures[(source.path, name)] = f"re-export chain longer than {MAX_IMPORT_HOPS} files"
                return None
            file = self.module_file(source.path, level, module)
            if file is None:
                if level and imported is not None:  # a relative import names the tree's own code
                    self.failures[(source.path, name)] = f"`{'.' * level}{module or ''}` is not in the analysed tree"
                elif imported is not None and module:
                    why = not_found_reason(module, self.site_setting)
                    if why is not None:
                        self.failures[(source.path, name)] = why
                continue
            next_source = self._load_for(source, name, file)
            if next_source is None:
                continue
            result = self._follow(next_source, imported_name, own, stop_at_definitions, hops - 1, seen)
            if result is not None:
                self.failures.pop((source.path, name), None)
                return result
            why = self.failures.get((next_source.path, imported_name))
            if why is not None:
                self.failures[(source.path, name)] = why
        return None

    def assigned_binding(self, source: SourceFile, name: str):
        """(file, line) of the top-level assignment that binds `name` in `source` or in a file it
        imports the name from (module_bindings), or None."""
        return self._follow(source, name, lambda file, n: file.assigned.get(n), stop_at_definitions=True)

    def is_import(self, source: SourceFile, name: str) -> bool:
        return name in source.from_imports or name in source.module_imports

    def why_not_followed(self, source: SourceFile, name: str) -> str | None:
        """Why `name` (imported in `source`) means nothing the run could read, if it is known."""
        return self.failures.get((source.path, name))


def _inside(path: Path, folder: str) -> bool:
    return str(path) == folder or str(path).startswith(folder.rstrip("/") + "/")


def _guarded_imports(body) -> list:
    """Relative imports under a top-level `if` or `try` (`if TYPE_CHECKING:`, `try: ... except
    ImportError:`): a package's lazy `__init__` maps the same names to the same submodules when they
    are first read, so they name the definition; an import at the top level itself wins."""
    found = []
    for statement in body:
        blocks = [statement.body, statement.orelse] if isinstance(statement, ast.If) else \
            [statement.body, statement.orelse, *(h.body for h in statement.handlers)] \
            if isinstance(statement, ast.Try) else []
        for block in blocks:
            found.extend(s for s in block if isinstance(s, ast.ImportFrom) and s.module != "__future__")
    return found
