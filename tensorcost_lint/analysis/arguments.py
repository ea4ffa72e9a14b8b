"""A call's arguments as written, and the literal readings every transfer table shares (axes, sizes)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from shape_annotations import Const

from .facts import DimFact, IntFact, SequenceFact
from .literals import int_value


@dataclass
class CallArgs:
    positional: list
    keywords: dict
    starred: bool
    stars: dict = field(default_factory=dict)  # id(node) -> "*" or "**" for starred values in `positional`

    def get(self, index: int, keyword: str | None = None):
        if keyword is not None and keyword in self.keywords:
            return self.keywords[keyword]
        return self.positional[index] if index < len(self.positional) else None


def call_args(node: cst.Call) -> CallArgs:
    positional, keywords, starred, stars = [], {}, False, {}
    for arg in node.args:
        if arg.star:
            starred = True
            positional.append(arg.value)
            stars[id(arg.value)] = arg.star
        elif arg.keyword is not None:
            keywords[arg.keyword.value] = arg.value
        else:
            positional.append(arg.value)
    return CallArgs(positional, keywords, starred, stars)


def literal_axes(args, start: int = 0, interp=None) -> list[int] | None:
    """Literal int axes, given either as varargs or as one tuple/list; with `interp`, also a name
    bound to a known int (`unsqueeze_dim=1`, a parameter's default, `dim=-1` passed down)."""
    nodes = args.positional[start:]
    if len(nodes) == 1 and isinstance(nodes[0], (cst.Tuple, cst.List)):
        nodes = [e.value for e in nodes[0].elements]
    values = [int_value(n) if int_value(n) is not None or interp is None else _named_int(interp, n) for n in nodes]
    return None if None in values else values


def _named_int(interp, node):
    if not isinstance(node, cst.Name):
        return None  # evaluating anything else here could record its call sites twice
    fact = interp.eval(node)
    if type(fact) is IntFact:
        return fact.value  # `dim=-1` passed down as a parameter (a whole-model run knows it)
    dim = fact.dim if type(fact) is DimFact else None
    return dim.value if type(dim) is Const else None


def dim_args(interp, args, start: int = 0, *, empty: bool = False):
    """Sizes given as varargs or one tuple/list/shape; -1 → None. Returns None if any is unknown.
    `empty`: the sizes of a new tensor, where torch takes a literal 0 (`x.new_zeros(B, 0, D)`, a
    buffer grown by concatenation); elsewhere a 0 stays unread, as `dim_of` leaves it."""
    nodes = args.positional[start:]
    if len(nodes) == 1 and not isinstance(nodes[0], (cst.Integer, cst.UnaryOperation)):
        single = nodes[0]
        if isinstance(single, (cst.Tuple, cst.List)):
            nodes = [e.value for e in single.elements]
        else:
            fact = interp.eval(single)
            if type(fact) is SequenceFact and all(type(i) is DimFact or _inferred(i) for i in fact.items):
                return [None if _inferred(i) else i.dim for i in fact.items]
            if type(fact) is DimFact:
                return [fact.dim]
            return None
    dims = []
    for node in nodes:
        if int_value(node) == -1:
            dims.append(None)
            continue
        if empty and int_value(node) == 0:
            dims.append(Const(0))
            continue
        spliced = id(node) in args.stars  # `x.expand(*x.size(), n)`: whatever the starred value is
        if spliced or (args.starred and isinstance(node, (cst.Name, cst.Attribute, cst.Subscript))):
            fact = interp.eval(node)  # `x.reshape(*input_shape, -1)`: a spliced sequence of sizes
            if type(fact) is SequenceFact:
                if not all(type(i) is DimFact or _inferred(i) for i in fact.items):
                    return None
                dims.extend(None if _inferred(i) else i.dim for i in fact.items)
                continue
            if spliced:
                return None  # a splice of unknown length: evaluated once, never read as one size
        dim = interp.dim_of(node)
        if dim is None:
            return None
        dims.append(dim)
    return dims


def _inferred(item) -> bool:
    """The `-1` of a sizes tuple built in code (`(-1,) + x.shape[1:]`): the size view/reshape solve.
    It is the int -1 to everything else (`F.pad(x, (1, -1, 0, 0))`, `dims = (-1, -2)`)."""
    return type(item) is IntFact and item.value == -1
