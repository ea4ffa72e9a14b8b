"""Names a module binds at its top level other than by `def`, `class` or `import`, and modules reached
other than by a plain import (issue 22, defect 6): `helper = _h` is `_h`; `from .sub import c` where
`sub` re-exports the module `c`; `importlib.import_module("pkg.c")` and `__import__("pkg.c")` of the
tree's modules; and what a name read off a module of the tree (`c.helper`) is. A name bound to a
value the run does not read says so where it is called, so a call is never dropped behind a
complete-looking total."""

from __future__ import annotations

import ast

import libcst as cst

from shape_annotations import Const

from ...analysis.facts import DimFact, StringFact
from ...analysis.interpreter import UNHANDLED
from ..values.objects import ClassRef, FunctionRef, ModuleRef

# The calls that import a module by its dotted name at run time.
DYNAMIC_IMPORTS = frozenset({"importlib.import_module", "__import__"})


def record(source, body: list) -> None:
    """Fill `source.aliases` (`helper = _h`) and `source.assigned` (any other `name = value`, by line)
    from a module's top-level statements; the last binding of a name wins, as Python binds it.
    `source.timeline` keeps every top-level statement that binds or changes a name, in order
    (module_order.py reads a name's value as of a point of the module)."""
    for statement in body:
        for name, kind in _events(statement):
            source.timeline.setdefault(name, []).append((statement.lineno, kind, statement))
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            if isinstance(value, ast.Name) and value.id != target.id:
                source.aliases[target.id] = value.id
                source.assigned.pop(target.id, None)
            else:
                source.assigned[target.id] = statement.lineno
                source.aliases.pop(target.id, None)


# What a top-level statement does to the names it touches (module_order.py): "assign" binds the
# statement's value, "import" binds what the import names, "change" runs the statement on the value
# the name holds (`NAMES.update({...})`, `NAMES["k"] = v`, `NAMES += [...]`), and "other" binds a
# value the timeline does not compute (a def, a class, a tuple target): unknown from there on.
def _events(statement) -> list:
    if isinstance(statement, ast.Assign):
        found = []
        for target in statement.targets:
            if isinstance(target, ast.Name):
                found.append((target.id, "assign"))
            elif isinstance(target, (ast.Subscript, ast.Attribute)) and _root(target) is not None:
                found.append((_root(target), "change"))
            else:
                found.extend((name.id, "other") for name in ast.walk(target) if isinstance(name, ast.Name))
        return found
    if isinstance(statement, ast.AnnAssign) and statement.value is not None:
        target = statement.target
        if isinstance(target, ast.Name):
            return [(target.id, "assign")]
        return [(_root(target), "change")] if _root(target) is not None else []
    if isinstance(statement, ast.AugAssign):
        root = statement.target.id if isinstance(statement.target, ast.Name) else _root(statement.target)
        return [(root, "change")] if root is not None else []
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and isinstance(statement.value.func.value, ast.Name):
        return [(statement.value.func.value.id, "change")]  # `NAMES.update({...})`: a method on the value
    if isinstance(statement, ast.ImportFrom):
        return [(alias.asname or alias.name, "import") for alias in statement.names if alias.name != "*"]
    if isinstance(statement, ast.Import):
        return [(alias.asname or alias.name.split(".")[0], "other") for alias in statement.names]
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [(statement.name, "other")]
    return []


def _root(target):
    """`NAMES` of `NAMES["k"]`, `NAMES.field` or `NAMES["k"]["j"]`; None for any other store."""
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def exported_names(body: list) -> frozenset | None:
    """The names of a top-level `__all__ = [...]` (or a tuple) of string literals; None without one."""
    names = None
    for statement in body:
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                     for t in statement.targets):
            value = statement.value
            literal = isinstance(value, (ast.List, ast.Tuple)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts)
            names = frozenset(e.value for e in value.elts) if literal else None
    return names


def star_exports(source, name: str) -> bool:
    """Whether `from source import *` binds `name`: listed in its `__all__`, or public without one."""
    return name in source.exports if source.exports is not None else not name.startswith("_")


def reexported_module(tree, source, name: str):
    """`from .sub import c` where `sub` holds no submodule `c` but binds the name `c` to a module
    (`from .. import c` in `sub/__init__.py`): that module's file, or None."""
    level, module, imported = source.from_imports[name]
    package_file = tree.module_file(source.path, level, module)
    if package_file is None:
        return None
    package = tree._load_for(source, name, package_file)
    if package is None or package is source:
        return None
    return tree.module_named(package, imported)


def unread_binding(tree, source, name: str) -> str | None:
    """Why a called name of the tree is unknown when its module binds it by an assignment the run
    does not read (`helper = make_helper()`, `helper = lib.helper`), in `source` or through the
    files it imports the name from; None when no such binding is found."""
    found = tree.assigned_binding(source, name)
    if found is None:
        return None
    file, line = found
    return f"`{name}` is bound at the top of {file.path.name} (line {line}) to a value the run does not read"


def dynamic_import(interp, args, name: str | None, func):
    """`importlib.import_module("pkg.c")`, `importlib.import_module(".c", "pkg")` or
    `__import__("pkg.c", fromlist=[...])`: the tree's module as a ModuleRef, or None."""
    if name not in DYNAMIC_IMPORTS and not (isinstance(func, cst.Name) and func.value == "__import__"
                                            and "__import__" not in interp.env):
        return None
    dotted = interp.eval(args.get(0, "name"))
    if type(dotted) is not StringFact or not dotted.value.strip("."):
        return None
    text, level = dotted.value.lstrip("."), len(dotted.value) - len(dotted.value.lstrip("."))
    package = args.get(1, "package")
    if level and not (isinstance(package, cst.Name) and package.value == "__package__"):
        named = interp.eval(package) if package is not None else None
        if type(named) is not StringFact or not named.value or level > 1:
            return None
        text, level = f"{named.value}.{text}", 0  # relative to the package named
    if name is None and not level and "." in text and _top_level_only(interp, args):
        text = text.split(".")[0]  # `__import__("pkg.c")` without a fromlist returns the package `pkg`
    return _module(interp, level, text)


def sys_module(interp, node: cst.Subscript):
    """`sys.modules["pkg.c"]`: the tree's module of that name as a ModuleRef, None when the tree has no
    such module; UNHANDLED for any other subscript."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index) \
            or interp.ctx.settings.imports.resolve(node.value) != "sys.modules":
        return UNHANDLED
    key = interp.eval(node.slice[0].slice.value)
    return _module(interp, 0, key.value) if type(key) is StringFact and key.value else None


def _module(interp, level: int, dotted: str):
    tree, source = interp.run.tree, interp.source
    file = tree.module_file(source.path, level, dotted)
    module = tree._load_for(source, dotted, file) if file is not None else None
    return ModuleRef(module) if module is not None else None


def _top_level_only(interp, args) -> bool:
    fromlist = args.get(3, "fromlist")
    return fromlist is None or (isinstance(fromlist, (cst.List, cst.Tuple)) and not fromlist.elements)


def is_dynamic_import(interp, node) -> bool:
    """`importlib.import_module(...)` / `__import__(...)`, or an attribute chain on one
    (`__import__("pkg.c").c`): importing records no site, so the chain may be evaluated again."""
    while isinstance(node, cst.Attribute):
        node = node.value
    if not isinstance(node, cst.Call):
        return False
    name = interp.ctx.settings.imports.resolve(node.func)
    return name in DYNAMIC_IMPORTS or (isinstance(node.func, cst.Name) and node.func.value == "__import__"
                                       and "__import__" not in interp.env)


def module_attribute(run, module: ModuleRef, name: str):
    """`c.helper` for a module of the tree: its definition (or one it imports), or a submodule."""
    found = run.tree.definition(module.source, name)
    if found is not None:
        source, definition = found
        return ClassRef(source, definition) if isinstance(definition, cst.ClassDef) else FunctionRef(source, definition)
    if name in module.source.constants:
        value = module.source.constants[name]
        return DimFact(Const(value)) if value >= 1 else None
    if name in module.source.timeline or name in module.source.from_imports or module.source.star_imports \
            or module.source.lazy_star_imports:
        value = run.module_value(module.source, name)  # `auto_mappings.NAMES`: the module's value, once it has run
        if value is not None:
            return value
    submodule = run.tree.submodule(module.source, name) or run.tree.module_named(module.source, name)
    return ModuleRef(submodule) if submodule is not None else None
