"""einx's elementwise operations (`einx.subtract("j, i -> i j", k_pos, q_pos)`, `einx.where`,
`einx.less`, ...): each input's axes named in the description, the output laid out as its own
axes say. An axis takes its size from the input that names it (or a `name=size` keyword); a
literal `1` is a new axis of size 1; every input axis is in the output (an elementwise op reduces
nothing). Only plain descriptions are read — names and integers, inputs
split by commas, one `->`; brackets, compositions `(a b)`, `...` and anything else leave the shape
unknown, as does an axis two inputs give sizes the analysis cannot prove equal.

einx runs these as torch's elementwise ops after views: no FLOPs FlopCounterMode counts, so no
call site, only the shape (and a comparison's bool dtype) flows on. Its other operations (`dot`,
reductions, indexing) have no row: a call of one is read from einx's source like any package's."""

from __future__ import annotations

import re

from shape_annotations import Const, same_dim

from .facts import DimFact, IntFact, ScalarFact, StringFact, TensorFact

_AXIS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_NUMBERS = (ScalarFact, DimFact, IntFact)


def _axes(text: str) -> list | None:
    """The axes of one side of a plain description, or None when it is not plain."""
    tokens = text.split()
    return tokens if all(_AXIS.fullmatch(token) for token in tokens) else None


def _parse(description: str):
    """([axes of each input], axes of the output), or None."""
    inputs, arrow, output = description.partition("->")
    if not arrow or "->" in output:
        return None
    sides = [_axes(part) for part in inputs.split(",")]
    out = _axes(output)
    return None if out is None or None in sides else (sides, out)


def _bind(bound: dict, axis: str, dim, sizes) -> bool:
    if axis.isdigit():
        return type(dim) is Const and dim.value == int(axis)
    if axis in bound and not same_dim(bound[axis], dim, sizes):
        return False
    bound.setdefault(axis, dim)
    return True


def _shape(interp, description, operands, parameters):
    """The output shape, or None when the description or an operand is not read."""
    parsed = _parse(description)
    if parsed is None or len(parsed[0]) != len(operands):
        return None
    named = {axis for axes in parsed[0] for axis in axes if not axis.isdigit()}
    if not named <= set(parsed[1]):
        return None  # an input axis the output drops: no elementwise op (einx refuses it)
    sizes = interp.ctx.settings.sizes
    bound = {name: dim for name, dim in parameters.items() if dim is not None}
    for axes, operand in zip(parsed[0], operands):
        if type(operand) in _NUMBERS and not axes:
            continue  # a scalar: `einx.add("a, -> a", x, 1)`
        if type(operand) is not TensorFact or operand.shape is None or len(operand.shape) != len(axes):
            return None
        if not all(_bind(bound, axis, dim, sizes) for axis, dim in zip(axes, operand.shape)):
            return None
    result = []
    for axis in parsed[1]:
        dim = Const(int(axis)) if axis.isdigit() else bound.get(axis)
        if dim is None:
            return None
        result.append(dim)
    return tuple(result)


def _elementwise(kind: str):
    """`kind`: "same" (the inputs' common dtype), "divide" (that dtype when it is a float one),
    "bool" (a comparison), "where" (mask, x, y: the values' dtype)."""

    def transfer(interp, args):
        description = interp.eval(args.get(0, "description"))
        operands = [interp.eval(node) for node in args.positional[1:]]
        parameters = {}
        for key, node in args.keywords.items():
            fact = interp.eval(node)
            if key != "backend":
                parameters[key] = fact.dim if type(fact) is DimFact else None
        tensors = [f for f in operands if type(f) is TensorFact]
        if args.starred or not tensors:
            return None
        framework = tensors[0].framework
        shape = _shape(interp, description.value, operands, parameters) if type(description) is StringFact else None
        values = [f for f in (operands[1:] if kind == "where" else operands) if type(f) is TensorFact]
        dtypes = {f.dtype for f in values}
        dtype = "bool" if kind == "bool" else (dtypes.pop() if len(dtypes) == 1 else None)
        if kind == "divide" and dtype is not None and not dtype.startswith(("float", "bfloat", "complex")):
            dtype = None  # ints divided: torch's default float
        return TensorFact(shape, dtype, framework=framework)

    return transfer
