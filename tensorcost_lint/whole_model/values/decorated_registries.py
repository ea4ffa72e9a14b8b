"""Registries filled by a decorator at import time (timm's `@register_model`, many plugin tables):

    _model_entrypoints = {}
    def register_model(fn):
        _model_entrypoints[fn.__name__] = fn
        return fn

    @register_model
    def vit_tiny(pretrained=False, **kwargs): ...

The table's literal is empty; what it holds is every definition of the package decorated with a
function that stores its argument under the argument's `__name__`. Importing the package runs those
decorators, so the entries are read from the package's files (as text, bounded), each keyed by its
definition's name — never from a name the registry might hold by other means.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from ...safe_io.files import MAX_SOURCE_BYTES

MAX_PACKAGE_FILES = 2000  # files of one package searched for decorated definitions
MAX_FILE_BYTES = MAX_SOURCE_BYTES  # the pre-check reads what the run may load (source_tree's cap)


def registering_decorators(home, table: str) -> set[str]:
    """Names of the top-level functions of `home` (a SourceFile) that store their one argument in
    `table` under the argument's `__name__` and return it."""
    found = set()
    for statement in home.definitions.statements.values():
        if not isinstance(statement, ast.FunctionDef) or len(statement.args.args) != 1:
            continue
        parameter = statement.args.args[0].arg
        names = {parameter + ".__name__"}
        stores = returns = False
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
                if isinstance(target, ast.Name) and ast.unparse(value) in names:
                    names.add(target.id)  # `model_name = fn.__name__`
                elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                        and target.value.id == table and ast.unparse(target.slice) in names \
                        and isinstance(value, ast.Name) and value.id == parameter:
                    stores = True
            elif isinstance(node, ast.Return) and isinstance(node.value, ast.Name) and node.value.id == parameter:
                returns = True
        if stores and returns:
            found.add(statement.name)
    return found


def decorated_entries(run, home, table: str) -> list:
    """(key, ast.Name of the definition, SourceFile) for each definition of `home`'s package that a
    registering decorator of `table` decorates."""
    decorators = registering_decorators(home, table)
    if not decorators:
        return []
    entries = []
    for path in _package_files(Path(home.path)):
        try:
            with open(path, "rb") as handle:
                text = handle.read(MAX_FILE_BYTES)
        except OSError:
            continue
        if not any(name.encode() in text for name in decorators):
            continue  # the text pre-check: a file that never names the decorator registers nothing
        try:
            source = home if path == Path(home.path) else run.tree.load(path)
        except Exception:  # noqa: BLE001 - SourceError and friends: a file that cannot be read registers nothing
            continue
        for name, statement in source.definitions.statements.items():
            if any(_registers(run, source, decorator, home, decorators) for decorator in statement.decorator_list):
                entries.append((name, ast.Name(name, ast.Load()), source))
    return entries


def _registers(run, source, decorator, home, decorators: set) -> bool:
    if not isinstance(decorator, ast.Name):
        return False
    found = run.tree.definition(source, decorator.id)
    return found is not None and found[0] is home and getattr(found[1], "name", None) is not None \
        and found[1].name.value in decorators


def _package_files(module: Path) -> list:
    """The .py files of the top-level package holding `module`, sorted (bounded)."""
    top = module.parent
    while (top.parent / "__init__.py").is_file():
        top = top.parent
    if not (top / "__init__.py").is_file():
        return [module]
    files = []
    for folder, children, names in os.walk(top):
        children.sort()
        for name in sorted(names):
            if name.endswith(".py"):
                files.append(Path(folder) / name)
                if len(files) >= MAX_PACKAGE_FILES:
                    return files
    return files
