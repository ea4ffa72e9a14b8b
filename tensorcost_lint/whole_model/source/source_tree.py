"""The files of a whole-model run: each read once with the stdlib parser (settings, imports,
constants, where each top-level definition lies), and the names a file imports followed through the
tree's own files (re-export chains, star imports, lazy `__init__`s), bounded in files read and hops
followed, with the reason kept for every chain that breaks. Each definition the run reaches is given
its LibCST tree only then (lazy_definitions.py)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from shape_annotations import merge_dim_bindings

from ...analysis.ast_positions import SourceText
from ...analysis.context import FileSettings, Recorder, UnitContext
from ...analysis.file_analysis import _primary_framework, read_flags, read_pragmas
from ...analysis.imports import import_table_from_ast
from ...safe_io.bounded_read import TooLarge, read_capped
from ...safe_io.files import MAX_SOURCE_BYTES
from ...safe_io.source_lines import source_lines
from ...analysis.source_parse import parse_source
from .dim_reads import recorded_like
from . import module_bindings
from ..values.installed_source import MODELLED_PACKAGES, import_roots, not_found_reason, searched_in_site
from .lazy_definitions import LazyDefinitions, TreeFileContext
from ..values.source_error import SourceError

# A file a whole-model run reads is capped as `check` caps one (MAX_SOURCE_BYTES, 64 MiB: a generated
# module is read, /dev/zero under a .py name is not), and so is all the source one run reads: a run
# holds what it parsed (the stdlib tree, ~100 bytes per source byte) to its end, and a repository of
# 2,000 files at the cap each would be 128 GiB. The largest file of transformers (modeling_utils.py)
# is 280 KB; a zoo model's run reads under 2 MB in all. What a run interprets is bounded apart, by
# `work_budget.steps` (statements) whatever the files' sizes.
MAX_RUN_SOURCE_BYTES = MAX_SOURCE_BYTES
MAX_FILES = 2000
# `from .a import x` where a.py re-exports x from b.py, and so on: files followed for one name. A
# chain longer than this is listed as not followed (its cost is unknown), never silently dropped.
MAX_IMPORT_HOPS = 64


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
    lazy_star_imports: list = field(default_factory=list)  # the same under `if TYPE_CHECKING:` (a lazy package)
    aliases: dict = field(default_factory=dict)  # top-level `helper = _h` -> "_h" (module_bindings)
    assigned: dict = field(default_factory=dict)  # other top-level `name = ...` -> line (module_bindings)
    timeline: dict = field(default_factory=dict)  # name -> [(line, kind, ast statement)] (module_bindings)
    exports: frozenset | None = None  # `__all__` when a literal: what `from m import *` binds


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
        self.bytes_read = 0  # of the files read (MAX_RUN_SOURCE_BYTES)
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
        limit = min(MAX_SOURCE_BYTES, MAX_RUN_SOURCE_BYTES - self.bytes_read)
        try:
            raw = read_capped(path, limit)
            self.bytes_read += len(raw)
            text = raw.decode("utf-8-sig")
            tree = parse_source(text)
        except TooLarge as error:
            self.unreadable[path] = f"{path}: cannot be analysed: {error}" if limit == MAX_SOURCE_BYTES else \
                f"{path}: reading it would take this run past {MAX_RUN_SOURCE_BYTES:,} bytes of source; refused"
            raise SourceError(self.unreadable[path]) from None
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
        lines = source_lines(text, keepends=True)  # one list for both: 100,000 lines are ~8 MB
        source = SourceFile(path, ctx, LazyDefinitions(lines, spans, ctx))
        source.definitions.source = SourceText(text, lines)
        source.definitions.statements = {s.name: s for s in tree.body
                                         if isinstance(s, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
        source.definitions.classes = source.classes
        guarded_stars = []
        for statement in _guarded_imports(tree.body):  # `if TYPE_CHECKING: from .peft import Mixin` (lazy modules)
            for alias in statement.names if isinstance(statement, ast.ImportFrom) and statement.level else ():
                if alias.name != "*":
                    source.from_imports.setdefault(alias.asname or alias.name,
                                                   (statement.level, statement.module, alias.name))
                else:  # `if TYPE_CHECKING: from .modeling_x import *`: the names a lazy module gives
                    guarded_stars.append((statement.level, statement.module))
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
        source.lazy_star_imports = [star for star in guarded_stars if star not in source.star_imports]
        if source.star_imports:
            imports.star_aliases = lambda name: self.star_alias(source, name)
        source.exports = module_bindings.exported_names(tree.body)
        module_bindings.record(source, tree.body)
        self.files[path] = source
        return source

    def module_file(self, importer: Path, level: int, module: str | None) -> Path | None:
        """The file of `from .module import x` (level 1) or `from pkg.module import x` in the tree."""
        parts = module.split(".") if module else []
        if parts and not level and parts[0] in MODELLED_PACKAGES:
            return None  # torch, einops, ...: their tables model them, wherever a copy of their source lies
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
        targets = [(*imported, False)] if imported is not None else \
            [(level, module, name, False) for level, module in source.star_imports] + \
            [(level, module, name, True) for level, module in source.lazy_star_imports]
        for level, module, imported_name, lazy in targets:
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
            if lazy and file.name == "__init__.py":
                # a lazy package's names are its own files' (`from .modeling_x import *`); one listing
                # whole packages (an index of every model) is not searched: a name it lacks would read them all
                continue
            next_source = self._load_for(source, name, file)
            if next_source is None or imported is None and not module_bindings.star_exports(next_source, name):
                continue
            result = self._follow(next_source, imported_name, own, stop_at_definitions, hops - 1, seen)
            if result is not None:
                self.failures.pop((source.path, name), None)
                return result
            why = self.failures.get((next_source.path, imported_name))
            if why is not None:
                self.failures[(source.path, name)] = why
        return None

    def star_alias(self, source: SourceFile, name: str, hops: int = MAX_IMPORT_HOPS) -> str | None:
        """The dotted name `name` means in `source` when it comes from a star import of a tree file
        that imports it (`from .activations import *`, where activations.py has `from torch import
        nn`): that file's import binds it, as Python's star import copies the binding. None when
        `source` binds the name itself or no star-imported file imports it."""
        if any(kind != "import" for _, kind, _ in source.timeline.get(name, ())) or name in source.definitions \
                or name in source.from_imports or not hops:
            return None
        for level, module in source.star_imports:
            file = self.module_file(source.path, level, module)
            try:
                star = self.load(file) if file is not None else None
            except SourceError:
                continue
            if star is None or not module_bindings.star_exports(star, name):
                continue
            found = star.ctx.settings.imports.aliases.get(name) or self.star_alias(star, name, hops - 1)
            if found is not None:
                return found
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
