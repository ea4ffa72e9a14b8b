"""What an attribute read on an object of a class of the tree finds in its class chain, as Python's
attribute lookup finds it: a property (a data descriptor, so it wins over the instance's own
attributes) runs its getter; a method is a bound function; anything else is left to the caller
(an instance attribute, a class attribute).

The chain is walked on the stdlib trees (inheritance._chain); only the getter that runs is parsed
by LibCST, alone, as LazyDefinitions.method parses a method (a property with a setter has two
definitions of its name: the getter is the one decorated `@property`, not the last)."""

from __future__ import annotations

import ast

import libcst as cst

from shape_annotations import Const

from ...analysis.facts import DimFact, SelfFact, SequenceFact, TensorFact, known_int
from ...analysis.imports import ast_dotted_name
from ...analysis.interpreter import UNHANDLED
from ..values.inheritance import _chain, outside_bases
from ..source.lazy_definitions import parse_piece
from ..values.pure_expressions import side_effect_free
from ..values.library_objects import IntFact
from ..values.objects import BoolFact, FunctionRef
from .registries import constant_fact

# decorators that make a method an attribute computed on each read (functools' cached one reads the
# same the first time, which is the only read a run makes of one object's attribute)
_PROPERTY_DECORATORS = frozenset({"property", "cached_property", "functools.cached_property"})


def _defines(node: ast.ClassDef, name: str) -> list:
    """The statements of the class body that bind `name` (defs, assignments), in order."""
    found = []
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.name == name:
            found.append(statement)
        elif isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets):
            found.append(statement)
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                and statement.target.id == name and statement.value is not None:
            found.append(statement)
    return found


def property_getter(run, instance, name: str):
    """The FunctionRef of the getter when the first class of the instance's chain that binds `name`
    binds it to a property; None otherwise (a method, a class attribute, nothing)."""
    chain = _chain(run, instance.source, instance.class_name)
    for home, node in chain:
        bound = _defines(node, name)
        if not bound:
            continue
        getter = next((s for s in bound if isinstance(s, ast.FunctionDef)
                       and any(ast_dotted_name(d.func if isinstance(d, ast.Call) else d) in _PROPERTY_DECORATORS
                               for d in s.decorator_list)), None)
        if getter is None:
            return None
        parsed = _parse_method(home, node.name, getter)
        return None if parsed is None else FunctionRef(home, parsed, instance)
    return None


def property_setter(run, instance, name: str):
    """The FunctionRef of the setter (`@name.setter`) when the first class of the instance's chain
    that binds `name` binds it to a property with one; None otherwise."""
    for home, node in _chain(run, instance.source, instance.class_name):
        bound = _defines(node, name)
        if not bound:
            continue
        setter = next((s for s in reversed(bound) if isinstance(s, ast.FunctionDef) and any(
            isinstance(d, ast.Attribute) and d.attr == "setter" and isinstance(d.value, ast.Name) and d.value.id == name
            for d in s.decorator_list)), None)
        parsed = _parse_method(home, node.name, setter) if setter is not None else None
        return None if parsed is None else FunctionRef(home, parsed, instance)
    return None


def _parse_method(home, class_name: str, method: ast.FunctionDef):
    """The LibCST node of one method of a top-level class, parsed alone with its decorators."""
    cache = home.definitions.parsed
    key = (class_name, method.name, method.lineno)
    if key in cache:
        return cache[key]
    if method.col_offset != 4:
        return None
    first = min([method.lineno] + [d.lineno for d in method.decorator_list])
    lines = home.definitions.lines
    try:
        module = parse_piece("class _:\n" + "".join(lines[first - 1:method.end_lineno]), home.ctx.settings.path, first)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    parsed = next(s for s in module.body[0].body.body if isinstance(s, cst.FunctionDef))
    home.ctx.add_piece(module, first - 2)
    cache[key] = parsed
    return parsed


def read_property(run, instance, name: str, missing=None):
    """The value of `obj.name` when the class chain makes it a property (its getter run with no
    arguments, as an attribute read runs it); `missing` when it is none."""
    getter = property_getter(run, instance, name)
    if getter is None:
        return missing
    return run._invoke(getter, [], {}, None)


def class_binds(run, instance, name: str) -> bool:
    """Whether a class of the instance's chain binds `name` (a def, a property, a class attribute)."""
    return any(_defines(node, name) for _, node in _chain(run, instance.source, instance.class_name))


MAX_PROTOCOL_ITEMS = 256  # items of an object read through `__len__`/`__getitem__` (unrolled_loops.MAX_UNROLLED)


def protocol_items(interp, value):
    """What iterating an object of a class of the tree yields when its class reads as a sequence:
    `__len__` and `__getitem__` of the chain and no `__iter__` (collections.abc.Sequence's iteration
    calls `self[i]` for i in range(len(self))): a SequenceFact of the items; `value` itself
    otherwise (a known length of at most MAX_PROTOCOL_ITEMS, else unknown)."""
    run = interp.run
    if type(value) is TensorFact and value.shape and type(value.shape[0]) is Const \
            and 0 <= value.shape[0].value <= MAX_PROTOCOL_ITEMS:
        # iterating a tensor yields its rows (`[x.item() for x in torch.linspace(0, rate, depth)]`),
        # each a tensor of the remaining dims computed from it (a gradient flows back through each)
        rows = tuple(value.with_shape(value.shape[1:]) for _ in range(value.shape[0].value))
        if run.needs_grad(value):
            for row in rows:
                run.mark(row, [value])
        return SequenceFact(rows)
    if type(value) is not SelfFact or run.instance(value) is None:
        return value
    instance = run.instance(value)
    if class_binds(run, instance, "__iter__"):
        return value
    length, item = run.method_of(value, "__len__"), run.method_of(value, "__getitem__")
    if length is None or item is None:
        return value
    count = known_int(run._invoke(length, [], {}, None), run.sizes)
    if count is None or not 0 <= count <= MAX_PROTOCOL_ITEMS:
        return value
    return SequenceFact(tuple(run._invoke(item, [IntFact(i) if i == 0 else DimFact(Const(i))], {}, None)
                              for i in range(count)))


def is_instance(interp, value, type_nodes):
    """`isinstance(obj, C)` for an object of a class of the tree and classes C of the tree: True
    when C is in its class chain; False when no C is and every base of the chain is known (a class
    of the tree, or one named outside it, which cannot derive from the tree's own classes); None
    otherwise."""
    from ..values.objects import ClassRef

    run = interp.run
    instance = run.instance(value) if type(value) is SelfFact else None
    if instance is None:
        return None
    classes = [interp.eval(node) for node in type_nodes]
    if not classes or any(type(c) is not ClassRef for c in classes):
        return None
    chain = _chain(run, instance.source, instance.class_name)
    if not chain:
        return None
    names = {(str(home.path), node.name) for home, node in chain}
    if any((str(c.source.path), c.node.name.value) in names for c in classes):
        return True
    for home, base in outside_bases(chain):
        dotted = _dotted(base)
        if dotted is None or run.tree.class_ast(home, dotted.split(".")[0]) is not None:
            return None  # a base of the tree the chain did not reach, or one not named plainly
        if dotted.split(".")[0] in home.from_imports and home.ctx.settings.imports.resolve_text(dotted) is None:
            return None
    return False


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def class_constant(run, instance, name: str, missing=None):
    """`obj.name` read from its class when the first class of the chain binding `name` assigns it a
    literal (`is_sliding = False`, `model_type = "llama"`, `bias: bool = True`, `scale = 0.5`): its
    fact; `missing` when it binds it otherwise (a method, a computed value) or not at all."""
    for _, node in _chain(run, instance.source, instance.class_name):
        bound = _defines(node, name)
        if not bound:
            continue
        statement = bound[-1]
        value = getattr(statement, "value", None) if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(value, ast.Constant):
            return missing
        fact = constant_fact(run, value.value)  # `default_fraction = 1.0`: a float whose value the run keeps
        return missing if fact is None else fact
    return missing


def class_value(run, instance, name: str, missing=None):
    """`Cls.name` (or `obj.name` with no attribute of its own) when the first class of the chain
    binding `name` assigns it an expression (`_model_mapping = MODEL_FOR_CAUSAL_LM_MAPPING`): its
    value, evaluated once at the top level of the class's module, as the class body ran it when
    the module was imported; `missing` when the chain binds it otherwise or not at all."""
    for home, node in _chain(run, instance.source, instance.class_name):
        bound = _defines(node, name)
        if not bound:
            continue
        statement = bound[-1]
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or isinstance(statement.value, ast.Constant):
            return missing
        return run.top_level_value(("class value", id(node), name),
                                   lambda: (home, _parse_class_statement(home, statement)), statement.lineno)
    return missing


def _parse_class_statement(home, statement):
    """The LibCST node of a class-body assignment's value, parsed alone (its positions join the
    file's context)."""
    lines = home.definitions.lines
    try:
        module = parse_piece("class _:\n" + "".join(lines[statement.lineno - 1:statement.end_lineno]),
                             home.ctx.settings.path, statement.lineno)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    body = module.body[0].body.body
    small = body[0].body[0] if body and isinstance(body[0], cst.SimpleStatementLine) else None
    if not isinstance(small, (cst.Assign, cst.AnnAssign)) or small.value is None:
        return None
    home.ctx.add_piece(module, statement.lineno - 2)
    return small.value


def contains(interp, node: cst.Comparison):
    """`item in obj` / `item not in obj` of an object of a class of the tree whose chain defines
    `__contains__`: the method runs on the item, as Python's `in` calls it; UNHANDLED (nothing
    evaluated) for any other comparison."""
    if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn)):
        return UNHANDLED
    container = node.comparisons[0].comparator
    if not side_effect_free(container):
        return UNHANDLED
    method = dunder(interp.run, interp.eval(container), "__contains__")
    if method is None:
        return UNHANDLED
    item = interp.eval(node.left)
    found = interp.run._invoke(method, [item], {}, node)
    return None if type(found) is not BoolFact else BoolFact(found.value == isinstance(node.comparisons[0].operator, cst.In))


def item(interp, node: cst.Subscript):
    """`obj[key]` of an object of a class of the tree whose chain defines `__getitem__`: the
    method's value for the key; UNHANDLED (nothing evaluated) for any other subscript."""
    method = _item_method(interp, node)
    if method is None:
        return UNHANDLED
    return interp.run._invoke(method, [interp.eval(node.slice[0].slice.value)], {}, node)


def is_item_of_object(interp, node) -> bool:
    """`registry[key]` read by `item` (its object's `__getitem__` runs): a callee written on it
    (`registry[type(config)]._from_config(config)`) is evaluated once, as any other."""
    return isinstance(node, cst.Subscript) and _item_method(interp, node) is not None


def _item_method(interp, node: cst.Subscript):
    """The `__getitem__` a one-index subscript of a re-readable object runs, or None."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index) or not side_effect_free(node.value):
        return None
    return dunder(interp.run, interp.eval(node.value), "__getitem__")


def dunder(run, value, name: str):
    """The bound method `name` of an object of a class of the tree (the chain's own definition;
    torch's containers keep their own reading), or None."""
    if type(value) is not SelfFact or run.instance(value) is None or run.instance(value).contents is not None:
        return None
    return run.method_of(value, name)
