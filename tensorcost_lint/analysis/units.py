"""Which parts of a file LibCST must see, decided on the stdlib `ast` tree.

LibCST's parse and its position metadata cost several times `ast.parse` on real model code, and
most functions in a model file (weight init, config plumbing, loading) hold nothing tensorcost can
report. A unit — a top-level function, or one method of a top-level class — is analysed only if it
can produce a finding: it calls something that is a call site or einops, uses `@`, builds or calls
an `nn.Linear`, carries a shape-string annotation, or has a shape-like comment. A cheap look at a
unit's text rejects most units first; the rest get one walk of their tree. A method's class
`__init__` comes along, since it builds the attributes the method reads through `self`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .site_registry import CALL_NAMES, MODULE_CLASSES

SITE_NAMES = CALL_NAMES
# einops reshapes can contradict a declared shape (TCL002), but `x.repeat(...)` is also a torch
# method: these count only in files that import einops.
EINOPS_NAMES = frozenset({"rearrange", "repeat", "reduce"})
LINEAR_CLASSES = frozenset(MODULE_CLASSES)
SHAPE_COMMENT = re.compile(r"#\s*(?:shape\b|[(\[]\s*[\w.])")
# Shape strings on text, a superset of what the tree walk takes for one: a string item of a
# subscript (`Float[Tensor, "b s"]`, `Union["Slice", X]`, on one line or several) comes right after
# a `[` or a `,`; a string annotation (`x: "Float[...]"`, `-> "..."`) right after a `:` or `->`;
# torchtyping's `TensorType[...]` names itself; shape-like comments start with `#`. Between the two
# only spaces, line breaks, `(` and backslash continuations, or a comment (then the unit is
# walked): one character class, so the search stays linear on any text.
_THEN_STRING = r"[\s(\\]*(?:[rRuU]{0,2}['\"]|#)"
SHAPE_TEXT = rf"[\[,]{_THEN_STRING}|(?::|->){_THEN_STRING}|TensorType|#\s*(?:shape\b|[(\[])"
_MODULE_TEXT = re.compile(r"\b(?:" + "|".join(sorted(LINEAR_CLASSES)) + r")\b")


# A superset, on text, of what the tree walk looks for: a unit whose text has none of these cannot
# be a candidate. (Names inside strings or comments only cost a walk, never a missed finding.)
def _unit_text(names) -> re.Pattern:
    return re.compile(r"@|\b(?:" + "|".join(sorted(names)) + r")\b|" + SHAPE_TEXT)


_UNIT_TEXT = {False: _unit_text(SITE_NAMES), True: _unit_text(SITE_NAMES | EINOPS_NAMES)}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class Unit:
    """Source lines [start, end] (1-based, decorators included) analysed together."""

    start: int
    end: int
    kind: str  # "function", "class" (the whole class), or "method"
    class_key: int | None = None  # methods of one class share their `self` attributes
    is_init: bool = False
    node: object = field(default=None, compare=False, repr=False)  # its stdlib statement (the ast front end reads it)


@dataclass
class Selection:
    units: list = field(default_factory=list)
    whole_file: bool = False  # module-level code holds candidates: analyse the file in one piece
    alias_statements: list = field(default_factory=list)  # (start, end) of `Name = Float[...]` lines
    alias_nodes: list = field(default_factory=list)  # their stdlib statements, in the same order
    constants: dict = field(default_factory=dict)  # module-level `NAME = 64`


def _call_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _has_shape_string(node: ast.Subscript) -> bool:
    """`Float[Tensor, "b s"]` (a tuple holding a string) or torchtyping's `TensorType["b"]` — not
    `mapping["key"]`, which model code is full of."""
    inner = node.slice
    if isinstance(inner, ast.Tuple):
        items = inner.elts
    else:
        value = node.value
        name = value.attr if isinstance(value, ast.Attribute) else getattr(value, "id", "")
        if not name.endswith("TensorType"):
            return False
        items = [inner]
    return any(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in items)


def _string_annotation(annotation) -> bool:
    """A forward-reference annotation `"Float[Tensor, 'b s']"` is a string, not a subscript."""
    return isinstance(annotation, ast.Constant) and isinstance(annotation.value, str) and "[" in annotation.value


def _first_line(node) -> int:
    decorators = getattr(node, "decorator_list", None)
    return min([node.lineno] + [d.lineno for d in decorators or ()])


@dataclass
class _Scan:
    """What one walk of a unit found: whether it is a candidate on its own, the `self.X(...)` calls
    it makes (candidates if X is an nn.Linear), and the `self.X = nn.Linear(...)` it builds."""

    candidate: bool = False
    self_calls: set = field(default_factory=set)
    linear_attributes: set = field(default_factory=set)


# Fields that never hold a node the scan looks at: names, flags, and the Load/Store contexts
# (a node on every name, attribute and subscript).
_SCALAR_FIELDS = frozenset({"ctx", "id", "attr", "arg", "name", "kind", "type_comment", "conversion", "is_async",
                            "simple", "level", "module"})
_CHILD_FIELDS: dict = {}


def _scan(node, site_names=SITE_NAMES, until_candidate: bool = False, chosen_calls=frozenset()) -> _Scan:
    """`until_candidate`: stop at the first proof of candidacy (the caller then reads nothing else;
    in model code that is mostly a shape annotation in the signature, found in a few steps), or at
    the first `self.X(...)` with X in `chosen_calls` (which chooses the method as well: a forward of
    100,000 `h = self.lin(h)` lines stops after its statements, not after its 600,000 nodes)."""
    scan = _Scan()
    proven = False
    # The nodes are visited breadth first, in `ast.walk`'s order (signatures and statements before
    # the expressions inside them), by one loop over a growing queue (no generator per node).
    queue = [node]
    node_class, fields_of = ast.AST, _CHILD_FIELDS
    for inner in queue:  # the list grows while it is read: a breadth-first queue
        if until_candidate and (scan.candidate or proven):
            return scan
        kind = type(inner)
        if kind is ast.Call:
            name = _call_name(inner)
            if name in site_names:
                scan.candidate = True
            func = inner.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                scan.self_calls.add(func.attr)
                proven = proven or func.attr in chosen_calls
        elif kind is ast.BinOp or kind is ast.AugAssign:
            if isinstance(inner.op, ast.MatMult):
                scan.candidate = True
        elif kind is ast.Subscript:
            if _has_shape_string(inner):
                scan.candidate = True
        elif kind is ast.Assign:
            if isinstance(inner.value, ast.Call) and _call_name(inner.value) in LINEAR_CLASSES:
                scan.linear_attributes.update(t.attr for t in inner.targets if isinstance(t, ast.Attribute))
        elif kind is ast.AnnAssign:
            if _string_annotation(inner.annotation):
                scan.candidate = True
        elif kind in _FUNCTIONS:
            arguments = inner.args
            annotations = [a.annotation for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
            if any(_string_annotation(a) for a in (*annotations, inner.returns)):
                scan.candidate = True
        fields = fields_of.get(kind)
        if fields is None:
            fields = fields_of[kind] = tuple(f for f in kind._fields if f not in _SCALAR_FIELDS)
        for name in fields:
            value = getattr(inner, name, None)
            if isinstance(value, node_class):
                queue.append(value)
            elif isinstance(value, list):
                queue.extend([item for item in value if isinstance(item, node_class)])
    return scan


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _linear_attributes(method) -> set:
    """`_scan(method).linear_attributes` on the statements alone: an assignment is a statement, and
    statements sit only in blocks, never inside an expression."""
    found = set()
    statements = [method]
    for statement in statements:  # grows while read
        if type(statement) is ast.Assign:
            value = statement.value
            if isinstance(value, ast.Call) and _call_name(value) in LINEAR_CLASSES:
                found.update(t.attr for t in statement.targets if isinstance(t, ast.Attribute))
        for name in _BLOCKS:
            block = getattr(statement, name, None)
            if block:
                statements.extend(block)
    return found


class _Source:
    def __init__(self, lines: list[str], einops: bool) -> None:
        self.lines = lines
        self.site_names = SITE_NAMES | EINOPS_NAMES if einops else SITE_NAMES
        self.unit_text = _UNIT_TEXT[einops]

    def text(self, node) -> str:
        return "\n".join(self.lines[_first_line(node) - 1: node.end_lineno])

    def scan(self, node, self_calls: re.Pattern | None = None, linear=frozenset()) -> _Scan | None:
        """None when the unit's text rules it out without walking its tree. `self_calls` matches
        calls of the class's nn.Linear attributes, which are call sites too. A candidate's scan stops
        at the first proof (or the first call of one of `linear`), so its `self_calls` may be partial
        (read only for whether they meet `linear`)."""
        text = self.text(node)
        if not self.unit_text.search(text) and (self_calls is None or not self_calls.search(text)):
            return None
        if "#" in text and SHAPE_COMMENT.search(text):
            return _Scan(candidate=True)  # a shape-like comment: a candidate without a walk
        return _scan(node, self.site_names, until_candidate=True, chosen_calls=linear)


def _is_alias(statement) -> bool:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return isinstance(statement.value, (ast.Subscript, ast.BinOp))
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
        annotation = statement.annotation
        name = annotation.attr if isinstance(annotation, ast.Attribute) else getattr(annotation, "id", "")
        return name == "TypeAlias"
    return False


def select_units(tree: ast.Module, lines: list[str], einops: bool = True) -> Selection:
    """`einops`: the file imports einops, so its function names are candidates too."""
    selection = Selection()
    source = _Source(lines, einops)
    for statement in tree.body:
        if isinstance(statement, _FUNCTIONS):
            scan = source.scan(statement)
            if scan is not None and scan.candidate:
                selection.units.append(Unit(_first_line(statement), statement.end_lineno, "function", node=statement))
        elif isinstance(statement, ast.ClassDef):
            _select_methods(statement, source, selection)
        elif _is_alias(statement):
            selection.alias_statements.append((statement.lineno, statement.end_lineno))
            selection.alias_nodes.append(statement)
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Constant) \
                and type(statement.value.value) is int and statement.value.value > 0:
            selection.constants[statement.targets[0].id] = statement.value.value
        elif not isinstance(statement, (ast.Import, ast.ImportFrom)):
            scan = source.scan(statement)
            if scan is not None and scan.candidate:
                selection.whole_file = True
    return selection


def _select_methods(cls: ast.ClassDef, source: _Source, selection: Selection) -> None:
    methods = [m for m in cls.body if isinstance(m, _FUNCTIONS)]
    others = [s for s in cls.body if not isinstance(s, _FUNCTIONS)]
    for statement in others:
        scan = source.scan(statement)
        if scan is not None and scan.candidate:
            # class-level code or nested classes that matter: the class is analysed in one piece
            selection.units.append(Unit(_first_line(cls), cls.end_lineno, "class", node=cls))
            return
    linear = set()
    for method in methods:
        if _MODULE_TEXT.search(source.text(method)):  # nn.Linear, nn.Conv2d, ... built here
            linear |= _linear_attributes(method)
    # `self.proj(x)`, also as `(self).proj (x)`: the attribute's name, then the call's `(`
    self_calls = re.compile(r"\b(?:" + "|".join(sorted(linear)) + r")\b[\s\\]*[(#]") if linear else None
    scans = {id(m): source.scan(m, self_calls, linear) for m in methods}
    chosen = [m for m in methods if scans[id(m)] is not None
              and (scans[id(m)].candidate or scans[id(m)].self_calls & linear)]
    if not chosen:
        return
    for method in methods:
        if method.name == "__init__" and method not in chosen:
            chosen.append(method)
    for method in sorted(chosen, key=lambda m: m.lineno):
        selection.units.append(Unit(_first_line(method), method.end_lineno, "method", cls.lineno,
                                    method.name == "__init__", node=method))
