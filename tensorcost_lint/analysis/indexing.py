"""`x[...]` on tensors and sequences: integer indices drop a dim, `None` inserts one, `...`
skips, a full slice keeps it, and `x.shape[i]` / `x.size()[i]` yield dims."""

from __future__ import annotations

import libcst as cst

from shape_annotations import BinOp, Const, ShapeError, Unknown, evaluate_dim, evaluate_integer, simplify_dim

from . import shape_ops
from .facts import DimFact, IntFact, ScalarFact, SequenceFact, TensorFact, known_int
from .literals import int_value


def _slice_dim(interp, dim, node: cst.Slice):
    """`:`, `::1` keep the dim; `:T` is T when T is a dim (the common `mask[:, :, :T, :T]`);
    `h:` of a dim d is d - h (`x[..., x.shape[-1] // 2:]`, rotate_half's second half)."""
    if node.lower is None and node.step is None:
        if node.upper is None:
            return dim
        literal = int_value(node.upper)
        if literal is not None and literal < 0:
            return _counted_slice(interp, dim, node)  # `scores[..., :-1]`: all but the last
        stop = interp.dim_of(node.upper)
        if stop is None and _arithmetic(node.upper):
            return _counted_slice(interp, dim, node)  # `x[..., :-rope_dim]`: an int that is no size, read again
        return stop if stop is not None else Unknown("slice")
    if node.upper is None and node.step is None:
        literal = int_value(node.lower)
        if literal is not None and literal <= 0:
            return _counted_slice(interp, dim, node)  # `x[:, -k:]`: the last k
        start = interp.dim_of(node.lower)
        if start is not None:
            value = evaluate_integer(start, interp.ctx.settings.sizes)
            if value is not None and value <= 0:  # `keys[:, :, -window + 1:]`: the last -start, clamped
                return _last(interp, dim, -value)
            return simplify_dim(BinOp("-", dim, start))  # `x[..., d // 2:]`: what the first `start` leave
        # `x[:, -self.keep:]`: an int that is no size; read again only when free of calls
        return _counted_slice(interp, dim, node) if _arithmetic(node.lower) else Unknown("slice")
    if node.step is None:
        length = _bounded_slice(interp, dim, node)
        if length is not None:
            return length
    elif node.upper is None:
        length = _strided_slice(interp, dim, node)
        if length is not None:
            return length
    return _counted_slice(interp, dim, node)


def _counted_slice(interp, dim, node: cst.Slice):
    """Python's own slice of a dim whose size the declared sizes give, from int bounds (negative ones
    count from the end, out-of-range ones clamp): len(range(size)[start:stop:step]). `:-k` stays
    `d - k`, a slice of all of it the dim itself, an empty slice the size 0; a bound or size not
    known is an unknown dim. Each bound is evaluated once."""
    bounds = [None if part is None else _int_bound(interp, part) for part in (node.lower, node.upper, node.step)]
    try:
        size = evaluate_dim(dim, interp.ctx.settings.sizes)
    except Exception:  # noqa: BLE001 - a dim with no declared size
        size = None
    if not isinstance(size, int) or _UNKNOWN in bounds or bounds[2] == 0:
        return Unknown("slice")
    length = len(range(size)[slice(*bounds)])
    if length < 1:
        return Const(0)  # `kv[:, :usable]` of a usable 0: an empty tensor, as a literal 0 size makes
    if length == size:
        return dim
    lower, upper, step = bounds
    if lower is None and step is None and upper is not None and upper < 0:
        return simplify_dim(BinOp("-", dim, Const(-upper)))
    return Const(length)


_UNKNOWN = object()


def _last(interp, dim, count: int):
    """`x[-count:]` along a dim: Python keeps min(count, size) (all of it for a start of 0)."""
    size = evaluate_integer(dim, interp.ctx.settings.sizes)
    if size is None or count < 1 and count != 0:
        return Unknown("slice")
    if count == 0 or count >= size:
        return dim
    return Const(count)


def _int_bound(interp, node):
    literal = int_value(node)
    if literal is not None:
        return literal
    value = known_int(interp.eval(node), interp.ctx.settings.sizes)
    return _UNKNOWN if value is None else value


def _strided_slice(interp, dim, node: cst.Slice):
    """`start::step` with literal start >= 0 and step >= 1 (rotate_half's `x[..., 0::2]`, `1::2`):
    len(range(start, d, step)) = (d - start + step - 1) // step, read only where d >= start (from
    the declared sizes, or start 0)."""
    start = 0 if node.lower is None else int_value(node.lower)
    step = int_value(node.step)
    if start is None or step is None or start < 0 or step < 1:
        return None
    if start > 0:
        try:
            size = evaluate_dim(dim, interp.ctx.settings.sizes)
        except ShapeError:
            return None
        if size is None or size < start:
            return None
    numerator = simplify_dim(BinOp("+", dim, Const(step - 1 - start)))
    if type(numerator) is Const:  # Python's floor, not the exact division a reshape needs
        return Const(numerator.value // step)
    if step == 1:
        return numerator
    split = _multiple_plus_constant(simplify_dim(dim), step)
    if split is not None:  # `gate_up[..., ::2]` of 2*i: floor((2*i + 1) / 2) is i for any integer i
        quotient, constant = split
        return simplify_dim(BinOp("+", quotient, Const((constant + step - 1 - start) // step)))
    length = BinOp("//", numerator, Const(step))
    try:
        evaluate_dim(length, interp.ctx.settings.sizes)
    except ShapeError:  # a dim's `//` divides exactly, Python's floor here: (d+1)//2 of an even d is its length
        size = evaluate_integer(dim, interp.ctx.settings.sizes)
        return Const(len(range(start, size, step))) if size is not None else Unknown("slice")
    return length


def _multiple_plus_constant(dim, step: int):
    """(q, s) with dim = step*q + s for a dim `c*x` or `c*x + s` whose factor c is a multiple of step."""
    constant = 0
    if type(dim) is BinOp and dim.op in ("+", "-") and type(dim.right) is Const:
        constant = dim.right.value if dim.op == "+" else -dim.right.value
        dim = dim.left
    if type(dim) is BinOp and dim.op == "*" and type(dim.left) is Const and dim.left.value % step == 0:
        return simplify_dim(BinOp("*", Const(dim.left.value // step), dim.right)), constant
    return None


def _bounded_slice(interp, dim, node: cst.Slice):
    """`h:u` of a dim d (GPT-2's `bias[:, :, key_length - query_length:key_length]`): u - h, when
    the declared sizes show 0 <= h <= u <= d, so Python's clamping changes nothing; else None.
    Only bounds without calls are read (evaluating them again records nothing)."""
    if not (_arithmetic(node.lower) and _arithmetic(node.upper)):
        return None
    start = Const(0) if int_value(node.lower) == 0 else interp.dim_of(node.lower)
    stop = interp.dim_of(node.upper)
    if start is None or stop is None:
        return None
    start = simplify_dim(start)  # `key_length - query_length` of equal lengths is 0
    try:
        values = [0 if start == Const(0) else evaluate_dim(start, interp.ctx.settings.sizes),
                  *(evaluate_dim(d, interp.ctx.settings.sizes) for d in (stop, dim))]
    except ShapeError:  # a bound that evaluates to 0 or less: not read
        return None
    if None in values or not 0 <= values[0] <= values[1] <= values[2]:
        return None
    return simplify_dim(BinOp("-", stop, start))


def _arithmetic(node) -> bool:
    """Names, attribute chains, integers, their items (`t.shape[-2]`) and arithmetic on them."""
    if isinstance(node, cst.BinaryOperation):
        return _arithmetic(node.left) and _arithmetic(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _arithmetic(node.expression)
    if isinstance(node, cst.Subscript):
        return _arithmetic(node.value) and all(
            isinstance(e.slice, cst.Index) and _arithmetic(e.slice.value) for e in node.slice)
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, (cst.Name, cst.Integer))


def subscript(interp, node: cst.Subscript):
    value = interp.eval(node.value)
    elements = list(node.slice)
    if type(value) is SequenceFact:
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            index = int_value(elements[0].slice.value)
            if index is not None and -len(value.items) <= index < len(value.items):
                return value.items[index]
        return None
    if type(value) is not TensorFact or value.shape is None or shape_ops.has_group(value.shape):
        for element in elements:
            interp.walk(element)
        return value.with_shape(None) if type(value) is TensorFact else None
    return index_tensor(interp, value, elements)


def index_tensor(interp, value: TensorFact, elements):
    """`value[elements]` for a tensor of known shape."""
    shape = list(value.shape)
    result = []
    position = 0
    ellipsis_seen = False
    advanced = []  # (place in result, place in elements, shape) of integer tensor indices
    scalar_places = []  # ints from variables: numpy counts them with the advanced indices
    consumed = sum(
        1 for e in elements
        if not (isinstance(e.slice, cst.Index) and _is_none_or_ellipsis(e.slice.value))
    )
    for place, element in enumerate(elements):
        part = element.slice
        if isinstance(part, cst.Index):
            inner = part.value
            if isinstance(inner, cst.Name) and inner.value == "None":
                result.append(Const(1))
                continue
            if isinstance(inner, cst.Ellipsis):
                if ellipsis_seen:
                    return value.with_shape(None)
                ellipsis_seen = True
                skip = len(shape) - consumed
                if skip < 0:
                    return value.with_shape(None)
                result.extend(shape[position: position + skip])
                position += skip
                continue
            if position >= len(shape):
                return value.with_shape(None)
            if int_value(inner) is not None:
                scalar_places.append(place)
                position += 1  # an integer index removes the dim
                continue
            if _int_list(inner) and sum(1 for e in elements if isinstance(e.slice, cst.Index)
                                        and isinstance(e.slice.value, cst.List)) == 1:
                result.append(Const(len(inner.elements)))  # `x[:, [-1], :]`: one list index keeps the dim
                position += 1
                continue
            fact = interp.eval(inner)
            if type(fact) in (DimFact, ScalarFact, IntFact):  # an int (`w[i]` in `for i in range(n)`) drops the dim
                scalar_places.append(place)
                position += 1
                continue
            if _integer_tensor(fact):
                advanced.append((len(result), place, fact.shape))
                position += 1
                continue
            return value.with_shape(None)  # a bool mask, an unknown index: not modelled
        else:
            if position >= len(shape):
                return value.with_shape(None)
            result.append(_slice_dim(interp, shape[position], part))
            position += 1
    result.extend(shape[position:])
    if advanced:
        # numpy counts int indices among the advanced ones; torch applies them first, as `select`
        ints = scalar_places if value.framework in ("numpy", "jax") else []
        return value.with_shape(_place_advanced(result, advanced, ints, interp.ctx.settings.sizes))
    return value.with_shape(tuple(result))


def _place_advanced(result: list, advanced: list, scalar_places: list, sizes):
    """The rule for integer tensor indices (with numpy's ints among them, as 0-d): their shapes
    broadcast together; the broadcast dims stand in the indices' place when the indices are
    adjacent (`pos[b_idx, q_idx]`), first otherwise (`x[idx, :, idx]`). None where their shapes
    do not broadcast."""
    broadcast = advanced[0][2]
    for _, _, shape in advanced[1:]:
        broadcast = shape_ops.broadcast(broadcast, shape, sizes)
        if broadcast is None or any(type(d) is Unknown for d in broadcast):
            return None
    places = sorted([place for _, place, _ in advanced] + scalar_places)
    at = advanced[0][0] if places == list(range(places[0], places[0] + len(places))) else 0
    return tuple(result[:at]) + tuple(broadcast) + tuple(result[at:])


_INTEGER_DTYPES = frozenset({"int64", "int32", "int16", "int8", "uint8"})


def _integer_tensor(fact) -> bool:
    return type(fact) is TensorFact and fact.dtype in _INTEGER_DTYPES and fact.shape is not None \
        and not shape_ops.has_group(fact.shape)


def _int_list(node) -> bool:
    return isinstance(node, cst.List) and bool(node.elements) and all(
        not isinstance(e, cst.StarredElement) and int_value(e.value) is not None for e in node.elements)


def _is_none_or_ellipsis(node) -> bool:
    return (isinstance(node, cst.Name) and node.value == "None") or isinstance(node, cst.Ellipsis)
