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
    from a module's top-level statements; the last binding of a name wins, as Python binds it."""
    for statement in body:
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
    submodule = run.tree.submodule(module.source, name) or run.tree.module_named(module.source, name)
    return ModuleRef(submodule) if submodule is not None else None
