"""Which paths of a `try` statement run, as Python runs them.

- The body raises nothing when running it left the run no doubt (model_run.doubt): no `raise` ran,
  no branch was undecided, every call it made was followed (and raised nothing either), every read
  found its value, no loop stood for passes it did not run one by one. Its path is then the only
  one: no handler runs (`try: config = config.per_layer_config[kind] except ValueError: pass`,
  where the view's item was read).
- The body certainly raises when it is one statement reading an attribute its object certainly
  lacks (`return super().__getattribute__(key)`, `getattr(obj, key)`, `obj.name`;
  object_attributes.lacks: AttributeError), a key a dict the run knows whole does not hold
  (`width = table[kind]`: KeyError) or an index out of a known list's range (IndexError): the first
  handler that catches it runs, from the state before the body — its class a builtin exception the
  raised one derives from, or a bare `except`.
  A handler naming any other class (the tree's own, an alias) cannot be matched, and every path
  runs, as when the body may or may not raise.
"""

from __future__ import annotations

import builtins

import libcst as cst

from ..library.object_attributes import lacks
from ..python.known_builtins import shadowed
from ..python.known_values import int_of, partly_unknown, side_effect_free
from ..values.library_objects import IntFact, MappingFact, SuperRef
from ..values.mapping_keys import key_of
from ...analysis.facts import DimFact, SequenceFact, StringFact

UNKNOWN = object()  # the handler that catches the exception cannot be told


def certain_exception(interp, body):
    """The exception class `body` certainly raises when it is one statement of a read that fails
    (above); None otherwise (nothing evaluated that records anything)."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine) or len(statements[0].body) != 1:
        return None
    small = statements[0].body[0]
    if isinstance(small, (cst.Return, cst.Expr)):
        value = small.value
    elif isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Name) for t in small.targets):
        value = small.value
    else:
        return None
    if isinstance(value, cst.Subscript):
        return _missing_item(interp, value)
    read = _attribute_read(interp, value)
    if read is None:
        return None
    owner, name, plain = read
    return AttributeError if lacks(interp.run, owner, name, plain) is True else None


def _missing_item(interp, node: cst.Subscript):
    """KeyError for `table[key]` of a dict the run knows whole without that key, IndexError for
    `items[i]` of a known list or tuple with i out of its range; None otherwise."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index) or not side_effect_free(node):
        return None
    container, key = interp.eval(node.value), interp.eval(node.slice[0].slice.value)
    if type(container) is MappingFact and not partly_unknown(container):
        found = key_of(interp.run, key)
        return KeyError if found is not None and found not in dict(container.items) else None
    if type(container) is SequenceFact and type(key) in (IntFact, DimFact):
        index = int_of(interp.run, key)
        return IndexError if index is not None and not -len(container.items) <= index < len(container.items) else None
    return None


def _attribute_read(interp, node):
    """(owner, name, plain) of `super().__getattribute__(k)`, `getattr(o, k)` or `o.name` whose parts
    evaluate without effect; None for any other expression."""
    if isinstance(node, cst.Attribute) and side_effect_free(node.value):
        return interp.eval(node.value), node.attr.value, False
    if not isinstance(node, cst.Call) or any(a.keyword is not None or a.star for a in node.args):
        return None
    args = [a.value for a in node.args]
    if not all(side_effect_free(a) for a in args):
        return None
    func = node.func
    if isinstance(func, cst.Name) and func.value == "getattr" and len(args) == 2 and not shadowed(interp, "getattr"):
        owner, plain = interp.eval(args[0]), False
    elif isinstance(func, cst.Attribute) and func.attr.value == "__getattribute__" and len(args) == 1 \
            and isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) \
            and func.value.func.value == "super" and not func.value.args:
        receiver = interp.eval(func.value)
        if type(receiver) is not SuperRef or interp.run.super_method(receiver, "__getattribute__") is not None:
            return None  # a class of the tree after this one defines its own lookup
        owner, plain = receiver.self_fact, True
    else:
        return None
    name = interp.eval(args[-1])
    return (owner, name.value, plain) if type(name) is StringFact else None


def catching_handler(interp, handlers, exception: type):
    """The first handler that catches `exception`; None when none does (it goes on up); UNKNOWN when
    a handler before the catching one names a class the run cannot compare."""
    for handler in handlers:
        if handler.type is None:
            return handler
        names = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
        classes = []
        for name in names:
            builtin = getattr(builtins, name.value, None) if isinstance(name, cst.Name) \
                and not shadowed(interp, name.value) else None
            if not (isinstance(builtin, type) and issubclass(builtin, BaseException)):
                return UNKNOWN  # the tree's own exception class, or one named through a module
            classes.append(builtin)
        if any(issubclass(exception, c) for c in classes):
            return handler
    return None
