"""Methods found through a class's bases in the analysed tree (an inherited `forward`, a helper of
a base class) and `super().method(...)`: depth-first, first base first, as Python's method
resolution order reads single and simple multiple inheritance.

The chain is walked on the stdlib trees; only the method found is parsed by LibCST (library base
classes such as transformers' `PreTrainedModel` run to thousands of lines)."""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.imports import ast_dotted_name, dotted_name
from .objects import ClassRef

# Bases walked per class: far above any real hierarchy (transformers' deepest is under 10), and a
# bound on a hostile one; a chain cut here is listed (ModelRun.limit_reached), never a silent zero.
MAX_BASES = 256


def last_method(cls: cst.ClassDef, name: str):
    """The method as Python binds it: the last definition (`@overload` stubs come first)."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
    found = [s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == name]
    return found[-1] if found else None


def _chain(run, source, name: str) -> list:
    """(file, ast.ClassDef) of the class `name` means in `source` and its bases, in lookup order.
    Read once per run for each (file, name): the tree's source does not change while it runs, and
    property, method and decorator lookups ask for the same chains thousands of times."""
    key = (id(source), name)
    cached = run.class_chains.get(key)
    if cached is None:
        cached = run.class_chains[key] = (source, _walk_chain(run, source, name))  # source kept: ids stay unique
    return list(cached[1])


def _walk_chain(run, source, name: str) -> list:
    chain, pending, seen = [], [(source, name)], set()
    while pending:
        home, class_name = pending.pop(0)
        if len(chain) >= MAX_BASES:
            _, last = chain[-1]
            run.limit_reached(chain[-1][0].path, last.lineno, last.col_offset + 1, f"class {name}",
                              f"more than {MAX_BASES} base classes: the rest are not walked (work limit)")
            break
        found = run.tree.class_ast(home, class_name)
        if found is None or id(found[1]) in seen:
            continue
        seen.add(id(found[1]))
        chain.append(found)
        class_source, node = found
        pending[:0] = [(class_source, base.id) for base in node.bases if isinstance(base, ast.Name)]
    return chain


def torch_base(run, source, cls: cst.ClassDef) -> str | None:
    """The torch module (`torch.nn.Sequential`, `torch.nn.Embedding`, ...) the class or a base of
    the tree derives from, other than `nn.Module` itself: `super().__init__(...)` builds it and
    `super().forward(x)` (or a call, with no `forward` of the tree) runs it."""
    chain = _chain(run, source, cls.name.value)
    bases = [(home, ast_dotted_name(base)) for home, node in chain for base in node.bases] if chain \
        else [(source, dotted_name(base.value)) for base in cls.bases]  # a class defined in a block
    for home, dotted in bases:
        name = (home.ctx.settings.imports.resolve_text(dotted) if dotted else None) or ""
        if name.startswith("torch.nn.") and name not in ("torch.nn.Module", "torch.nn.modules.module.Module"):
            return name
    return None


def module_root(run, source, cls: cst.ClassDef) -> bool:
    """Whether the class's chain leaves the tree only at `nn.Module` itself: its `super().__init__()`
    is torch's Module.__init__, which takes no argument, builds nothing and returns None."""
    chain = _chain(run, source, cls.name.value)
    if not chain:
        return False
    names = [(home.ctx.settings.imports.resolve_text(dotted) if dotted else None)
             for home, base in outside_bases(chain) for dotted in (ast_dotted_name(base),)]
    return bool(names) and all(name in ("torch.nn.Module", "torch.nn.modules.module.Module") for name in names)


def plain_class(run, source, cls: cst.ClassDef) -> bool:
    """A class whose whole chain is in the tree and derives from nothing but `object`: certainly
    not a module (a cache or state holder); False when any base is outside the tree or a library's."""
    chain = _chain(run, source, cls.name.value)
    if not chain or chain[0][1].name != cls.name.value:
        return False
    return all(ast_dotted_name(base) == "object" for _, base in outside_bases(chain))


def outside_bases(chain):
    """(file, base expression) of each base of the chain's classes that is not itself in the chain:
    where the chain leaves the tree (a library base, `object`) or stops being followed."""
    names = {node.name for _, node in chain}
    for home, node in chain:
        for base in node.bases:
            if not (isinstance(base, ast.Name) and base.id in names):
                yield home, base


def _defines(node: ast.ClassDef, name: str) -> bool:
    return any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name for s in node.body)


def find_method(run, source, cls, name: str, after=None):
    """(file, cst.FunctionDef) of `name` as the class `cls` (a cst.ClassDef of `source`) resolves
    it; with `after` (an ast.ClassDef), only classes after it in the chain (`super()`)."""
    _method = last_method
    chain = _chain(run, source, cls.name.value)
    if not chain or chain[0][0] is not source:
        own = _method(cls, name)  # a class the top level does not define: its own body only
        return (source, own) if own is not None and after is None else None
    start = 0
    if after is not None:
        positions = [i for i, (_, node) in enumerate(chain) if node is after]
        if not positions:
            return None
        start = positions[0] + 1
    for index in range(start, len(chain)):
        home, node = chain[index]
        if not _defines(node, name):
            continue
        method = _method(cls, name) if index == 0 else home.definitions.method(node.name, name)
        if method is None:
            return None
        run.method_owner[id(method)] = node
        return home, method
    return None


def owner_of(run, instance, method):
    """The ast.ClassDef defining `method` (a method of the instance's own class when not recorded)."""
    _method = last_method
    owner = run.method_owner.get(id(method))
    if owner is not None:
        return owner
    if _method(instance.cls, method.name.value) is method:
        found = run.tree.class_ast(instance.source, instance.class_name)
        return found[1] if found is not None else None
    return None


def is_subclass(run, cls: ClassRef, base: ClassRef) -> bool | None:
    """`issubclass(cls, base)` for two classes of the tree: True when `base` is on `cls`'s chain of
    bases; False when it is not and every base the chain leaves the tree by is `object` or torch's
    (no class of the tree derives from those); None when a base the chain could not follow might
    be it."""
    chain = _chain(run, cls.source, cls.node.name.value)
    if not chain or chain[0][1].name != cls.node.name.value:
        return None
    if any(home is base.source and node.name == base.node.name.value for home, node in chain):
        return True
    for home, expression in outside_bases(chain):
        dotted = ast_dotted_name(expression)
        name = home.ctx.settings.imports.resolve_text(dotted) if dotted else None
        if dotted != "object" and not (name or "").startswith("torch."):
            return None
    return False

