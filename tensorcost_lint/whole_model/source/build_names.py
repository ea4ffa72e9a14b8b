"""Where a name of a `build:` expression is defined (Contract 7a): as in a module of the config's
folder that imports it — a class or factory of the tree, of `source_roots`, or of an installed
package — found by reading files as text, never by importing.

`pkg.mod.Name` walks packages and modules from a root, then finds `Name` in the last module; a bare
`Name` is looked for in each top-level module and package of the config's folder, then of
`source_roots`, then of the site folders, and must be defined by exactly one of a layer's (two are
ambiguous: never a guess). Inside a module, a name is its own top-level definition or one it
imports, through `from .x import *` chains and imports under `if TYPE_CHECKING:` (the lazy
`__init__` of large libraries), followed file by file with a text pre-check so that a library of
3,000 files is searched by reading the few hundred that can hold the name.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import Path

from ...safe_io.bounded_read import read_capped
from ...safe_io.confinement import Confinement
from ...safe_io.files import MAX_SOURCE_BYTES
from ..values.installed_source import MODELLED_PACKAGES

MAX_FILES_READ = 6000  # per search: transformers' lazy star-import tree is ~1,500 files
# per search, as source_tree bounds a run (each file at most MAX_SOURCE_BYTES, `check`'s cap): the
# texts read are held until the search ends. A bare name searched through transformers reads ~2,400
# of its files, ~39 MB (its .py files are 54 MB in all)
MAX_BYTES_READ = 4 * MAX_SOURCE_BYTES
MAX_ENTRIES_PER_ROOT = 5000  # top-level modules and packages listed per root (a hostile folder)
MAX_IMPORT_DEPTH = 24  # `from .a import *` inside `from .b import *` …


class NameNotFound(Exception):
    """Why a name of the build expression means nothing (or more than one thing)."""


@dataclass(frozen=True)
class Located:
    module: str  # the dotted module to import from (`transformers.models.llama.modeling_llama`)
    name: str  # the name defined there
    consumed: int  # how many names of the dotted chain it stands for (`timm.create_model`: 2)


class NameSearch:
    """Searches `layers`: [(what the layer is, [root folders])], in order."""

    def __init__(self, layers: list) -> None:
        self.layers = [(label, [Path(root) for root in roots]) for label, roots in layers]
        # a search reads inside its roots only (`from .... import *` climbing out of a package, a
        # symlink to a secret): the same rule as confinement.py, by real path
        self.allowed = Confinement.of(*(root for _, roots in self.layers for root in roots))
        self.read = 0
        self.bytes_read = 0  # of the texts read (MAX_BYTES_READ)
        self._texts: dict = {}
        self._trees: dict = {}

    # -- the chain ----------------------------------------------------------------------------------
    def locate(self, chain: list[str]) -> Located:
        head = chain[0]
        for _, roots in self.layers:
            for root in roots:
                module = _module_path(root, [head]) if head not in MODELLED_PACKAGES else None
                if module is not None:
                    return self._within(root, [head], module, chain)
        return self._bare(head)

    def _within(self, root: Path, parts: list, file: Path, chain: list) -> Located:
        """`chain[len(parts):]` read from the module `parts` (its file `file`) under `root`."""
        for index in range(len(parts), len(chain)):
            name = chain[index]
            sub = _module_path(root, [*parts, name]) if file.name == "__init__.py" else None
            found = self._find(root, file, name, 0, set())
            if found is not None:
                found_root, found_file, found_name = found
                return Located(_dotted(found_root, found_file), found_name, index + 1)
            if sub is None:
                raise NameNotFound(f"`{'.'.join(chain[:index + 1])}` resolves to nothing: "
                                   f"{'.'.join(parts)} defines no `{name}`")
            parts, file = [*parts, name], sub
        raise NameNotFound(f"`{'.'.join(chain)}` is a module, not a class or function that builds a model")

    def _bare(self, name: str) -> Located:
        for label, roots in self.layers:
            found: dict = {}
            for root in roots:
                for entry in _top_level(root):
                    hit = self._find(root, entry, name, 0, set())
                    if hit is not None:
                        found.setdefault((str(hit[1]), hit[2]), hit)
            if len(found) > 1:
                where = ", ".join(sorted(_dotted(r, f) for r, f, _ in found.values())[:3])
                raise NameNotFound(f"`{name}` is ambiguous: defined in {where} ({label}); write its module, "
                                   f"e.g. {_dotted(*next(iter(found.values()))[:2])}.{name}")
            if found:
                root, file, defined = next(iter(found.values()))
                return Located(_dotted(root, file), defined, 1)
        searched = ", ".join(label for label, roots in self.layers if roots)
        raise NameNotFound(f"`{name}` resolves to nothing: no module of {searched} defines it "
                           "(not imported, and never guessed)")

    # -- one module ---------------------------------------------------------------------------------
    def _find(self, root: Path, file: Path, name: str, depth: int, seen: set):
        """(root, file, name) of the definition `name` means in the module `file`, or None."""
        if depth > MAX_IMPORT_DEPTH or (file, name) in seen:
            return None
        seen.add((file, name))
        text = self._text(file)
        if text is None or (name.encode() not in text and b"import *" not in text):
            return None  # the pre-check: a module that neither names it nor star-imports holds nothing
        tree = self._tree(file, text)
        if tree is None:
            return None
        stars = []
        for statement in _statements(tree.body):
            if isinstance(statement, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name:
                return root, file, name
            if isinstance(statement, (ast.Assign, ast.AnnAssign)):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    return root, file, name
            if isinstance(statement, ast.ImportFrom):
                for alias in statement.names:
                    if alias.name == "*":
                        stars.append(statement)
                    elif (alias.asname or alias.name) == name:
                        target = self._import_target(root, file, statement)
                        if target is not None:
                            return self._find(target[0], target[1], alias.name, depth + 1, seen)
        for statement in stars:
            target = self._import_target(root, file, statement)
            if target is not None:
                hit = self._find(target[0], target[1], name, depth + 1, seen)
                if hit is not None:
                    return hit
        return None

    def _import_target(self, root: Path, file: Path, statement: ast.ImportFrom):
        """(root, file) of the module a `from … import` statement reads."""
        parts = statement.module.split(".") if statement.module else []
        if statement.level:
            base = file.parent
            for _ in range(statement.level - 1):
                base = base.parent
            path = _module_path(base, parts) if parts else (base / "__init__.py" if (base / "__init__.py").is_file()
                                                           else None)
            return None if path is None else (root, path)
        if not parts or parts[0] in MODELLED_PACKAGES:
            return None
        for _, roots in self.layers:
            for candidate in roots:
                path = _module_path(candidate, parts)
                if path is not None:
                    return candidate, path
        return None

    def _text(self, file: Path):
        if file not in self._texts:
            self.read += 1
            if self.read > MAX_FILES_READ:
                raise NameNotFound(f"the search read {MAX_FILES_READ:,} files (bounded work); write the name's "
                                   "module, e.g. package.module.Name")
            try:
                text = read_capped(file, MAX_SOURCE_BYTES) if self.allowed.allows(file) else None
            except (OSError, ValueError):
                text = None
            self.bytes_read += len(text or b"")
            if self.bytes_read > MAX_BYTES_READ:
                raise NameNotFound(f"the search read {MAX_BYTES_READ:,} bytes (bounded work); write the name's "
                                   "module, e.g. package.module.Name")
            self._texts[file] = text
        return self._texts[file]

    def _tree(self, file: Path, text: bytes):
        if file not in self._trees:
            try:
                self._trees[file] = ast.parse(text.decode("utf-8-sig"))
            except (SyntaxError, UnicodeDecodeError, RecursionError, ValueError, MemoryError):
                self._trees[file] = None
        return self._trees[file]


def _statements(body) -> list:
    """Top-level statements and those under a top-level `if` or `try` (`if TYPE_CHECKING:`)."""
    found = []
    for statement in body:
        found.append(statement)
        if isinstance(statement, ast.If):
            found.extend(statement.body + statement.orelse)
        elif isinstance(statement, ast.Try):
            found.extend(statement.body + statement.orelse + [s for h in statement.handlers for s in h.body])
    return found


def _module_path(root: Path, parts: list) -> Path | None:
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    candidate = root.joinpath(*parts)
    for file in (candidate.with_suffix(".py"), candidate / "__init__.py"):
        if file.is_file():
            return file
    return None


def _top_level(root: Path) -> list:
    """The files of the top-level modules and packages of a root, sorted (bounded)."""
    try:
        names = sorted(os.listdir(root))[:MAX_ENTRIES_PER_ROOT]
    except OSError:
        return []
    files = []
    for name in names:
        stem = name[:-3] if name.endswith(".py") else name
        if not stem.isidentifier() or stem in MODELLED_PACKAGES:
            continue
        path = root / name
        if name.endswith(".py") and path.is_file():
            files.append(path)
        elif (path / "__init__.py").is_file():
            files.append(path / "__init__.py")
    return files


def _dotted(root: Path, file: Path) -> str:
    parts = list(file.relative_to(root).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)
