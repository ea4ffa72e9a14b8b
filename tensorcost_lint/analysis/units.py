"""Which parts of a file LibCST must see, decided on the stdlib `ast` tree.

LibCST's parse and its position metadata cost several times `ast.parse` on real model code, and
most functions in a model file (weight init, config plumbing, loading) hold nothing tensorcost can
report. A unit — a top-level function, or one method of a top-level class — is analysed only if it
can produce a finding: it calls something that is a call site or einops, uses `@`, builds or calls
an `nn.Linear`, carries a shape-string annotation, or has a shape-like comment. Everything else is
skipped without being parsed twice. A method's class `__init__` comes along, since it builds the
attributes the method reads through `self`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

SITE_NAMES = frozenset({
    "matmul", "mm", "bmm", "baddbmm", "addmm", "linear", "einsum", "contract", "dot", "dot_general",
    "scaled_dot_product_attention", "dot_product_attention", "rearrange", "repeat", "reduce",
})
LINEAR_CLASSES = frozenset({"Linear", "LazyLinear"})
SHAPE_COMMENT = re.compile(r"#\s*(?:shape\b|[(\[]\s*[\w.])")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class Unit:
    """Source lines [start, end] (1-based, decorators included) analysed together."""

    start: int
    end: int
    kind: str  # "function", "class" (the whole class), or "method"
    class_key: int | None = None  # methods of one class share their `self` attributes
    is_init: bool = False


@dataclass
class Selection:
    units: list = field(default_factory=list)
    whole_file: bool = False  # module-level code holds candidates: analyse the file in one piece
    alias_statements: list = field(default_factory=list)  # (start, end) of `Name = Float[...]` lines
    constants: dict = field(default_factory=dict)  # module-level `NAME = 64`


def _call_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _has_shape_string(node: ast.Subscript) -> bool:
    inner = node.slice
    items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
    return any(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in items)


def _first_line(node) -> int:
    decorators = getattr(node, "decorator_list", None)
    return min([node.lineno] + [d.lineno for d in decorators or ()])


class _Candidates:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def comments_in(self, start: int, end: int) -> bool:
        for line in self.lines[start - 1: end]:
            if "#" in line and SHAPE_COMMENT.search(line):
                return True
        return False

    def holds(self, node, linear_attributes=frozenset()) -> bool:
        for inner in ast.walk(node):
            if isinstance(inner, (ast.BinOp, ast.AugAssign)) and isinstance(inner.op, ast.MatMult):
                return True
            if isinstance(inner, ast.Call):
                name = _call_name(inner)
                if name in SITE_NAMES or name in LINEAR_CLASSES:
                    return True
                func = inner.func
                if isinstance(func, ast.Attribute) and func.attr in linear_attributes \
                        and isinstance(func.value, ast.Name) and func.value.id == "self":
                    return True
            elif isinstance(inner, ast.Subscript) and _has_shape_string(inner):
                return True
        if _string_annotations(node):
            return True
        return self.comments_in(_first_line(node), node.end_lineno)


def _string_annotations(node) -> bool:
    """Forward-reference annotations `"Float[Tensor, 'b s']"` are strings, not subscripts."""
    for inner in ast.walk(node):
        annotations = []
        if isinstance(inner, _FUNCTIONS):
            arguments = inner.args
            annotations = [a.annotation for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
            annotations += [inner.returns]
        elif isinstance(inner, ast.AnnAssign):
            annotations = [inner.annotation]
        for annotation in annotations:
            if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str) and "[" in annotation.value:
                return True
    return False


def _linear_attributes(cls: ast.ClassDef) -> frozenset:
    """`self.proj = nn.Linear(...)` anywhere in the class: calls of `self.proj` are call sites."""
    names = set()
    for inner in ast.walk(cls):
        if isinstance(inner, ast.Assign) and isinstance(inner.value, ast.Call) \
                and _call_name(inner.value) in LINEAR_CLASSES:
            for target in inner.targets:
                if isinstance(target, ast.Attribute):
                    names.add(target.attr)
    return frozenset(names)


def _is_alias(statement) -> bool:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return isinstance(statement.value, (ast.Subscript, ast.BinOp))
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
        annotation = statement.annotation
        name = annotation.attr if isinstance(annotation, ast.Attribute) else getattr(annotation, "id", "")
        return name == "TypeAlias"
    return False


def select_units(tree: ast.Module, lines: list[str]) -> Selection:
    selection = Selection()
    candidates = _Candidates(lines)
    for statement in tree.body:
        if isinstance(statement, _FUNCTIONS):
            if candidates.holds(statement):
                selection.units.append(Unit(_first_line(statement), statement.end_lineno, "function"))
        elif isinstance(statement, ast.ClassDef):
            _select_methods(statement, candidates, selection)
        elif _is_alias(statement):
            selection.alias_statements.append((statement.lineno, statement.end_lineno))
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Constant) \
                and type(statement.value.value) is int and statement.value.value > 0:
            selection.constants[statement.targets[0].id] = statement.value.value
        elif not isinstance(statement, (ast.Import, ast.ImportFrom)) and candidates.holds(statement):
            selection.whole_file = True
    return selection


def _select_methods(cls: ast.ClassDef, candidates: _Candidates, selection: Selection) -> None:
    linear = _linear_attributes(cls)
    methods = [m for m in cls.body if isinstance(m, _FUNCTIONS)]
    others = [s for s in cls.body if not isinstance(s, _FUNCTIONS)]
    if any(candidates.holds(s) for s in others):
        # class-level code or nested classes that matter: the class is analysed in one piece
        selection.units.append(Unit(_first_line(cls), cls.end_lineno, "class"))
        return
    chosen = [m for m in methods if candidates.holds(m, linear)]
    if not chosen:
        return
    key = cls.lineno
    for method in methods:
        if method.name == "__init__" and method not in chosen:
            chosen.append(method)
    for method in sorted(chosen, key=lambda m: m.lineno):
        selection.units.append(Unit(_first_line(method), method.end_lineno, "method", key, method.name == "__init__"))
