"""`isinstance(value, T)` in a whole-model run: one table saying, for each kind of value the run
holds, which types (builtins, `collections.abc`/`typing` ABCs, torch's tensor types) it is an
instance of and which it provably is not. Model code branches on it to accept several kinds of
argument:

    if isinstance(input, Tensor):      # torchvision's dense layer: one map, or the list so far
        prev_features = [input]
    dims = dim if isinstance(dim, tuple) else (dim,)

A test is True when the value is an instance of any type named, False when it is provably an
instance of none, and unknown (None) otherwise: a name the row does not list, a name the code
shadows (`list = ...`), a type held in a variable. Objects of the tree's classes are decided by
their class chain (class_members.is_instance), callables by what they are (callable_values)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ...analysis.facts import DimFact, DTypeFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, StringFact, TensorFact
from ...analysis.interpreter import UNHANDLED
from ..values.library_objects import IntFact, MappingFact
from ..values.objects import NONE, BoolFact, ClassRef, ModuleDict, ModuleList, ModuleRef, Sequential
from . import callable_values, class_members
from .known_builtins import shadowed
from .python_values import GrowingList


def _abcs(*names: str) -> frozenset:
    return frozenset(f"{module}.{name}" for module in ("collections.abc", "typing") for name in names)


TENSOR_TYPES = frozenset({"torch.Tensor", "torch.LongTensor", "torch.FloatTensor", "torch.BoolTensor"})
# tensor subclasses and wrappers that only tracing makes: an eager tensor is none of them
TRACING_TYPES = frozenset({"torch.fx.Proxy", "torch.fx.proxy.Proxy", "torch._subclasses.FakeTensor",
                           "torch._subclasses.fake_tensor.FakeTensor"})
# the builtin types a test may name by their bare name (a shadowed one is not the builtin)
BUILTIN_TYPES = frozenset({"int", "float", "bool", "complex", "str", "bytes", "tuple", "list", "dict", "set",
                           "frozenset", "slice", "range", "type", "object"})
_DATA = frozenset({"int", "float", "bool", "complex", "str", "bytes", "tuple", "list", "dict", "set", "frozenset",
                   "slice"})
_CONTAINER_ABCS = _abcs("Iterable", "Sequence", "Collection", "Container", "Mapping", "Sized")
_SEQUENCE_ABCS = _abcs("Iterable", "Sequence", "Collection", "Container", "Sized")
_MAPPING_ABCS = _abcs("Iterable", "Mapping", "Collection", "Container", "Sized")
_NONE_TYPES = frozenset({"NoneType", "types.NoneType"})


@dataclass(frozen=True)
class Row:
    """The types a kind of value is an instance of (`is_`), and those it provably is not; `closed`:
    it is an instance of no other type the test names (a str, None: their class is exact and no
    class of the tree is a base of it)."""

    is_: frozenset
    is_not: frozenset = frozenset()
    closed: bool = False


def _not(*groups, but=()) -> frozenset:
    return frozenset().union(*groups) - frozenset(but)


ROWS = {
    "none": Row(_NONE_TYPES, closed=True),
    "str": Row(frozenset({"str"}) | _SEQUENCE_ABCS, closed=True),
    # a bool is an int (`True + 1`)
    "bool": Row(frozenset({"bool", "int"}), _not(_DATA, TENSOR_TYPES, _CONTAINER_ABCS, but={"bool", "int"})),
    # IntFact: an int that is no size (0, -1) -- and `0.`, read as the int 0, so whether it is a
    # float is not known (`cast_tuple(0., n)`)
    "int": Row(frozenset({"int"}), _not(_DATA, TENSOR_TYPES, _CONTAINER_ABCS, but={"int", "float", "complex"})),
    # a size: an int (`4.` read as the size 4 is taken as one too: vit-pytorch's `pair(image_size)`)
    "size": Row(frozenset({"int"}), _not(_DATA, TENSOR_TYPES, _CONTAINER_ABCS, but={"int", "bool", "complex"})),
    # a float whose value the run knows (`0.5`, a config's `0.1`); any other number may be an int
    "float": Row(frozenset({"float"}), _not(_DATA, TENSOR_TYPES, _CONTAINER_ABCS, but={"float"})),
    "number": Row(frozenset(), _not(_DATA, TENSOR_TYPES, _CONTAINER_ABCS, but={"int", "float", "bool", "complex"})),
    "dict": Row(frozenset({"dict"}) | _MAPPING_ABCS, _not(_DATA, TENSOR_TYPES, _abcs("Sequence"), but={"dict"})),
    # a tuple or list display, or a list being appended to
    "tuple": Row(frozenset({"tuple"}) | _SEQUENCE_ABCS, _not(_DATA, TENSOR_TYPES, _abcs("Mapping"), but={"tuple"})),
    "list": Row(frozenset({"list"}) | _SEQUENCE_ABCS, _not(_DATA, TENSOR_TYPES, _abcs("Mapping"), but={"list"})),
    # a sequence no display built: a tuple, a list, a set, torch.Size, what `range`/`zip`/`map`
    # return -- iterable, and never a tensor, a number, a str or a dict
    "sequence": Row(_abcs("Iterable"), _not(_DATA, TENSOR_TYPES, _abcs("Mapping"),
                                            but={"tuple", "list", "set", "frozenset"})),
    # an eager tensor: no tracing proxy (`isinstance(x, torch.fx.Proxy)`), no Python data value
    "tensor": Row(TENSOR_TYPES, _not(TRACING_TYPES, _DATA, _abcs("Mapping"))),
    # a class is an instance of `type` (its metaclass derives from it), of no data type; any other
    # test of it is callable_values'
    "class": Row(frozenset({"type"}), _not(_DATA, TENSOR_TYPES)),
    "module": Row(frozenset({"types.ModuleType"}), _not(_DATA, TENSOR_TYPES, _CONTAINER_ABCS, {"type"})),
    "torch module": Row(frozenset({"torch.nn.Module"}), _not(_DATA, TENSOR_TYPES, {"type"})),
    "layer": Row(frozenset(), _not(_DATA, TENSOR_TYPES)),  # ModuleFact: a layer (or a function, `get_activation`)
    "dtype": Row(frozenset({"torch.dtype"}), _not(_DATA, TENSOR_TYPES, _CONTAINER_ABCS)),
}
_BY_TYPE = {NONE.__class__: "none", StringFact: "str", BoolFact: "bool", IntFact: "int", DimFact: "size",
            MappingFact: "dict", GrowingList: "list", TensorFact: "tensor", ClassRef: "class", ModuleRef: "module",
            Sequential: "torch module", ModuleList: "torch module", ModuleDict: "torch module", ModuleFact: "layer",
            DTypeFact: "dtype"}


def row_of(run, value) -> str | None:
    """The ROWS key of a value; None for a value no row describes."""
    kind = type(value)
    if kind is SequenceFact:
        return value.kind or "sequence"
    if kind is ScalarFact:
        return "float" if run.floats.value(value) is not None else "number"
    return _BY_TYPE.get(kind)


def type_names(interp, node) -> list:
    """The canonical names of the types `isinstance`'s second argument names: a tuple's items,
    `A | B`'s operands, `type(None)` as NoneType; None for an item that is no plain name (a
    variable, a builtin type's shadowed name)."""
    if type(node) is cst.Tuple:
        return [name for element in node.elements for name in
                (type_names(interp, element.value) if type(element) is cst.Element else [None])]
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.BitOr:
        return type_names(interp, node.left) + type_names(interp, node.right)
    if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "type" and len(node.args) == 1 \
            and type(node.args[0].value) is cst.Name and node.args[0].value.value == "None" \
            and not shadowed(interp, "type"):
        return ["NoneType"]
    resolved = interp.ctx.settings.imports.resolve(node)
    if resolved is not None:
        return [resolved]
    if type(node) is cst.Name and node.value in interp.env:  # a local: a class, or types held in a variable
        return [node.value] if type(interp.eval(node)) is ClassRef and node.value not in BUILTIN_TYPES else [None]
    if type(node) is cst.Name:
        builtin = node.value in BUILTIN_TYPES
        return [None] if builtin and shadowed(interp, node.value) else [node.value]
    return [None]


def type_nodes(node) -> list:
    if type(node) is cst.Tuple and all(type(element) is cst.Element for element in node.elements):
        return [item for element in node.elements for item in type_nodes(element.value)]
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.BitOr:
        return type_nodes(node.left) + type_nodes(node.right)
    return [node]


def decide(interp, value, names: list, nodes: list) -> bool | None:
    """`isinstance(value, names)`: True, False, or None when not known. `nodes`: the type
    expressions, evaluated only for an object of the tree's classes."""
    if type(value) is SelfFact:  # an object of a class of the tree against classes of the tree
        return class_members.is_instance(interp, value, nodes)
    key = row_of(interp.run, value)
    decided = _by_row(ROWS[key], names) if key is not None else None
    if decided is None and callable_values.callable_kind(value) is not None:
        return callable_values.isinstance_decision(interp.run, value, names)  # `isinstance(f, functools.partial)`
    return decided


def _by_row(row: Row, names: list) -> bool | None:
    if any(name in row.is_ or name == "object" for name in names):
        return True
    if all(name is not None and (name in row.is_not or row.closed) for name in names):
        return False
    return None


def isinstance_call(interp, args):
    """The registry's reading of `isinstance(x, T)`: a BoolFact when decided; None (x evaluated)
    when not."""
    if args.keywords or args.starred or len(args.positional) != 2:
        return UNHANDLED
    value = interp.eval(args.positional[0])
    node = args.positional[1]
    decided = decide(interp, value, type_names(interp, node), type_nodes(node))
    if decided is None:
        interp.run.doubt()  # an undecided test may raise (a type the run does not know)
        return None
    return BoolFact(decided)
