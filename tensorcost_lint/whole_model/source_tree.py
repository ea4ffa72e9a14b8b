"""The files of a whole-model run: each parsed once, with its settings and top-level definitions,
and the names a file imports from other files of the tree (relative and absolute imports)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from shape_annotations import merge_dim_bindings

from ..analysis.context import FileSettings, Recorder, UnitContext
from ..analysis.file_analysis import _primary_framework, read_flags, read_pragmas
from ..analysis.imports import import_table_from_ast
from ..bounded_read import read_capped

MAX_SOURCE_BYTES = 4 * 2**20
MAX_FILES = 2000


class SourceError(Exception):
    """An entry that cannot be read: one line naming the file and the reason (exit 2)."""


@dataclass
class SourceFile:
    path: Path
    ctx: UnitContext
    definitions: dict  # top-level name -> cst.ClassDef | cst.FunctionDef
    from_imports: dict = field(default_factory=dict)  # local name -> (level, module, name)
    constants: dict = field(default_factory=dict)  # top-level `NAME = 3` -> int


class SourceTree:
    """Parses each file once per run."""

    def __init__(self, root: Path, config, cli_dims: dict, recorder: Recorder) -> None:
        self.root = root
        self.config = config
        self.cli_dims = cli_dims
        self.recorder = recorder
        self.files: dict[Path, SourceFile | None] = {}

    def load(self, path: Path) -> SourceFile:
        path = path.resolve()
        if path in self.files:
            cached = self.files[path]
            if cached is None:
                raise SourceError(f"{path}: could not be parsed")
            return cached
        if len(self.files) >= MAX_FILES:
            raise SourceError(f"{path}: more than {MAX_FILES} files reached; refused")
        self.files[path] = None
        try:
            text = read_capped(path, MAX_SOURCE_BYTES).decode("utf-8-sig")
            tree = ast.parse(text)
            module = cst.parse_module(text)
        except FileNotFoundError:
            raise SourceError(f"{path}: file not found") from None
        except (OSError, UnicodeDecodeError, SyntaxError, cst.ParserSyntaxError, RecursionError) as error:
            raise SourceError(f"{path}: cannot be analysed: {str(error).splitlines()[0][:200]}") from None
        imports = import_table_from_ast(tree)
        sizes = merge_dim_bindings(self.config.dims, read_pragmas(text, Recorder()), self.cli_dims)
        settings = FileSettings(
            path=str(path), imports=imports, sizes=sizes, default_dtype=self.config.default_dtype,
            strict_broadcast=self.config.broadcast_policy == "strict", sequence_dims=tuple(self.config.sequence_dims),
            flags=read_flags(tree, imports, text), primary_framework=_primary_framework(imports))
        source = SourceFile(path, UnitContext(settings, self.recorder, module), {})
        for statement in module.body:
            if isinstance(statement, (cst.ClassDef, cst.FunctionDef)):
                source.definitions[statement.name.value] = statement
        for statement in tree.body:
            if isinstance(statement, ast.ImportFrom) and statement.module != "__future__":
                for alias in statement.names:
                    source.from_imports[alias.asname or alias.name] = (statement.level, statement.module, alias.name)
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name) \
                    and type(getattr(statement.value, "value", None)) is int:
                source.constants[statement.targets[0].id] = statement.value.value
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
            bases = list(dict.fromkeys([*list(importer.parents)[:6], self.root, *list(self.root.parents)[:3]]))
        for base in bases:
            candidate = base.joinpath(*parts) if parts else base
            for file in (candidate.with_suffix(".py") if parts else None, candidate / "__init__.py"):
                if file is not None and file.is_file():
                    return file
        return None

    def definition(self, source: SourceFile, name: str, depth: int = 0):
        """(file, definition) that `name` means in `source`: its own, or one it imports from the tree."""
        if name in source.definitions:
            return source, source.definitions[name]
        imported = source.from_imports.get(name)
        if imported is None or depth > 8:
            return None
        level, module, original = imported
        file = self.module_file(source.path, level, module)
        if file is None:
            return None
        try:
            target = self.load(file)
        except SourceError:
            return None
        return self.definition(target, original, depth + 1)
