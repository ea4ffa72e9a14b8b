"""Output records in a whole-model run: library-style dataclasses (HF `ModelOutput` subclasses)
built from their fields, read by attribute (`outputs.last_hidden_state`), indexed by position or key
(`outputs[0]`, `outputs["logits"]`, `outputs[:2]`) and unpacked — as the fields that are not None,
in declaration order, which is how `ModelOutput.to_tuple` hands them out.

Apart from library_values.py (config values, `getattr`, `isinstance`) because a record is built by
the run from a class of the tree: which `__init__` Python calls decides its fields, read here from
the class chain."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import DimFact, SequenceFact, StringFact
from ...analysis.imports import dotted_name
from ..values.library_objects import RecordFact
from .call_binding import UNKNOWN_REST, evaluate_arguments
from ..values.objects import NONE, ClassRef


# -- output records ----------------------------------------------------------------------------------

def _is_dataclass(cls: cst.ClassDef) -> bool:
    return any((dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or "")
               .rsplit(".", 1)[-1] == "dataclass" for d in cls.decorators)


def _class_chain(run, class_ref: ClassRef, depth: int = 0):
    """The class and its bases in the tree (first base first, depth-first), as (source, ClassDef)."""
    chain = [(class_ref.source, class_ref.node)]
    if depth > 8:
        return chain
    for base in class_ref.node.bases:
        if isinstance(base.value, cst.Name):
            found = run.tree.definition(class_ref.source, base.value.value)
            if found is not None and isinstance(found[1], cst.ClassDef):
                chain.extend(_class_chain(run, ClassRef(*found), depth + 1))
    return chain


def _base_names(run, class_ref: ClassRef) -> set:
    names = set()
    for _, cls in _class_chain(run, class_ref):
        names.update((dotted_name(b.value) or "").rsplit(".", 1)[-1] for b in cls.bases)
    return names


def construct_record(run, interp, class_ref: ClassRef, positional, keywords):
    """A dataclass without `__init__` built from its fields, or None when `class_ref` is not one.
    Python calls the first `__init__` of the class chain: one written in a class body, or the one
    `@dataclass` generates — so an undecorated subclass (`class Output(BaseOutput): pass`) builds as
    its dataclass base, with that base's fields (its own annotations are no fields)."""
    if not _dataclass_first(run, class_ref):
        return None  # decided on the stdlib trees: a library base (PreTrainedModel) is never parsed by LibCST
    chain = _class_chain(run, class_ref)
    for position, (_, cls) in enumerate(chain):
        if _has_init(cls):
            return None
        if _is_dataclass(cls):
            break
    else:
        return None
    fields: dict = {}
    for source, cls in reversed(chain[position:]):
        if not _is_dataclass(cls):
            continue
        for statement in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []:
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else []:  # not methods
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    fields[small.target.value] = small
    values = []
    for index, (name, statement) in enumerate(fields.items()):
        if index < len(positional):
            value = positional[index]
        elif name in keywords:
            value = keywords[name]
        elif statement.value is not None:
            value = _default(interp, statement.value)
        else:
            value = None
        values.append((name, value))
    return RecordFact(class_ref.node.name.value, values, "ModelOutput" in _base_names(run, class_ref))


def _dataclass_first(run, class_ref: ClassRef) -> bool:
    """Whether the first class of the chain with an `__init__` of its own is a dataclass's, read on
    the stdlib trees (a class the top level does not define: its own body)."""
    import ast

    from ..values.inheritance import _chain

    name = class_ref.node.name.value
    chain = _chain(run, class_ref.source, name)
    if not chain or chain[0][0] is not class_ref.source or chain[0][1].name != name:
        return _has_init(class_ref.node) is False and _is_dataclass(class_ref.node)
    for _, node in chain:
        if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__" for s in node.body):
            return False
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if (target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)) == "dataclass":
                return True
    return False


def _has_init(cls: cst.ClassDef) -> bool:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
    return any(isinstance(s, cst.FunctionDef) and s.name.value == "__init__" for s in body)


def _default(interp, node):
    """A field's default when it is a literal (`depth: int = 21`, `wa: float = 42.63`, `act: str =
    'relu'`, `preact: bool = False`): read as it reads anywhere; any other default is unknown (it would
    be read in the class's module, not the caller's)."""
    if isinstance(node, cst.Name) and node.value == "None":
        return NONE
    literal = node.expression if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
        else node
    if interp is not None and (isinstance(literal, (cst.Integer, cst.Float, cst.SimpleString))
                               or isinstance(node, cst.Name) and node.value in ("True", "False")):
        return interp.eval(node)
    return None  # a default we do not read is unknown


def record_item(record: RecordFact, key):
    """`record["name"]` or `record[i]` (HF ModelOutput: the i-th field that is not None)."""
    if type(key) is StringFact:
        return record.attribute(key.value)
    if not record.model_output:
        return None
    present = []
    for _, value in record.fields:
        if value is None:
            return None if len(present) <= _int(key) else present[_int(key)]
        if value is not NONE:
            present.append(value)
    index = _int(key)
    return present[index] if index is not None and -len(present) <= index < len(present) else None


def present_values(record: RecordFact):
    """The ModelOutput's values that are not None, in field order; None when one is unknown."""
    if not record.model_output or any(value is None for _, value in record.fields):
        return None
    return [value for _, value in record.fields if value is not NONE]


def _int(key):
    if type(key) is DimFact:
        from shape_annotations import Const
        return key.dim.value if type(key.dim) is Const else None
    return key if type(key) is int else None


def as_sequence(record: RecordFact):
    """`record.to_tuple()` / `tuple(record)` for a ModelOutput whose fields are all known."""
    if any(value is None for _, value in record.fields):
        return None
    return SequenceFact(tuple(value for _, value in record.fields if value is not NONE))


def replace_call(interp, args):
    """`dataclasses.replace(cfg, **changes)` of a record the run built: a new record of the same
    fields, those named changed; None when the record or a change is not known, or a change names no
    field (Python raises TypeError)."""
    positional, keywords = evaluate_arguments(interp, args)
    if len(positional) != 1 or type(positional[0]) is not RecordFact or UNKNOWN_REST in keywords:
        return None
    record = positional[0]
    names = [name for name, _ in record.fields]
    if any(name not in names for name in keywords):
        return None
    return RecordFact(record.class_name, [(name, keywords.get(name, value)) for name, value in record.fields],
                      record.model_output)
