"""The builtins over the values of a model's library and objects rather than plain known values:
`getattr`/`hasattr` of configs and modules (a deep copy of the config has what the config has),
`super()` in the frame of the method that calls it, `int(a / b)` of dims, `slice(0, None)`,
`tuple(record)`. The registry (builtin_registry.py) tries them after the readings over exactly known values.

Each returns UNHANDLED when it has not touched its arguments (another reading may apply)."""

from __future__ import annotations

import libcst as cst

from shape_annotations import BinOp, Const, evaluate_dim, simplify_dim

from ...analysis.facts import CONFIG, DimFact, ScalarFact, SelfFact, SequenceFact, StringFact
from ...analysis.interpreter import UNHANDLED
from ..python import attribute_presence, config_copies, known_floats, output_records
from ..python.known_values import int_fact
from ..values.library_objects import WHOLE_SLICE, IntFact, RecordFact, SuperRef
from ..values.objects import NONE, BoolFact, ClassRef, ModuleRef
from . import library_values
from ..values.inheritance import is_subclass


def getattr_of(interp, args):
    return library_values.getattr_call(interp.run, interp, args)


def issubclass_of(interp, args):
    """`issubclass(cls, Base)` of classes of the tree (inheritance.is_subclass); a tuple of them is
    any of its classes."""
    if args.keywords or args.starred or len(args.positional) != 2:
        return UNHANDLED
    cls, bases = (interp.eval(value) for value in args.positional)
    bases = bases.items if type(bases) is SequenceFact else (bases,)
    if type(cls) is not ClassRef or not bases or any(type(base) is not ClassRef for base in bases):
        return None
    decided = [is_subclass(interp.run, cls, base) for base in bases]
    if True in decided:
        return BoolFact(True)
    return BoolFact(False) if all(d is False for d in decided) else None


def super_of(interp, args):
    """`super()` with no arguments: the frame's own class and instance, as Python's `__class__` cell."""
    run = interp.run
    if args.positional or args.keywords or not run.frames:
        return UNHANDLED
    method, self_fact = run.frames[-1]
    return SuperRef(self_fact, method) if self_fact is not None else None


def int_of(interp, args):
    """`int(config.hidden_size / config.num_attention_heads)`: the floor of a ratio of dims, kept
    symbolic when it divides exactly."""
    if len(args.positional) != 1 or args.keywords:
        return UNHANDLED
    node = args.positional[0]
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        left, right = interp.eval(node.left), interp.eval(node.right)
        if type(left) is DimFact and type(right) is DimFact:
            try:
                a, b = evaluate_dim(left.dim, interp.run.sizes), evaluate_dim(right.dim, interp.run.sizes)
            except Exception:  # noqa: BLE001 - unbound: not known to divide
                return ScalarFact()
            if a is not None and b:
                return DimFact(simplify_dim(BinOp("//", left.dim, right.dim))) if a % b == 0 else DimFact(Const(a // b))
            return ScalarFact()
    fact = interp.eval(node)
    truncated = known_floats.truncated(interp.run, fact)  # `int(width / 2.5)`: Python's float, truncated
    if truncated is not None:
        return int_fact(truncated)
    return fact if type(fact) in (DimFact, IntFact) else ScalarFact()


def hasattr_of(interp, args):
    if len(args.positional) != 2 or args.keywords:
        return UNHANDLED
    run = interp.run
    owner, attribute = (interp.eval(value) for value in args.positional)
    reader = CONFIG
    if type(attribute) is StringFact and config_copies.original(run, owner, attribute.value) is not None:
        reader, owner = owner, CONFIG  # a copy of the config has what the config has, less what was removed from it
    if type(owner) in (SelfFact, ClassRef, ModuleRef) and type(attribute) is StringFact:
        return attribute_presence.has_attribute(run, owner, attribute.value)
    if owner is CONFIG and type(attribute) is StringFact and run.config_values:
        return BoolFact(library_values.config_has(run, attribute.value, reader))
    return None


def slice_of(interp, args):
    """`slice(0, None)` is the whole axis (`x[..., whole]`); any other slice object is unknown."""
    if len(args.positional) != 2 or args.keywords:
        return UNHANDLED
    lower, upper = (interp.eval(value) for value in args.positional)
    whole = (type(lower) is IntFact and lower.value == 0 or lower is NONE) and upper is NONE
    return WHOLE_SLICE if whole else None


def tuple_of(interp, args):
    """`tuple(outputs)` of a ModelOutput record: its non-None fields in order."""
    if len(args.positional) != 1:
        return UNHANDLED
    fact = interp.eval(args.positional[0])
    if type(fact) is RecordFact:
        return output_records.as_sequence(fact)
    return fact if type(fact) is SequenceFact else None
