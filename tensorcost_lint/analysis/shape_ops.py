"""Pure operations on symbolic shapes (tuples of DimExpr): what each tensor op does to a shape.

Every function returns None when the result cannot be known (an axis out of range, a dim that
cannot be solved): unknown stays unknown, the analysis never guesses.
"""

from __future__ import annotations

from shape_annotations import Const, Sym, Unknown, floordiv_dims, mul_dims, same_dim

ONE = Const(1)


def is_group(dim) -> bool:
    """A variadic group kept as one dim (`*batch`, `...`) whose rank is unknown."""
    return type(dim) is Sym and (dim.name.startswith("*") or dim.name == "...")


def has_group(shape) -> bool:
    return any(is_group(d) for d in shape)


def axis(index: int, rank: int, shape=None) -> int | None:
    """Normalise a possibly negative axis; positive axes are unsafe past a variadic group."""
    if shape is not None and index >= 0 and has_group(shape[: index + 1]):
        return None
    if shape is not None and index < 0 and has_group(shape[index:]):
        return None
    if -rank <= index < rank:
        return index % rank
    return None


def transpose(shape, a: int, b: int):
    i, j = axis(a, len(shape), shape), axis(b, len(shape), shape)
    if i is None or j is None:
        return None
    dims = list(shape)
    dims[i], dims[j] = dims[j], dims[i]
    return tuple(dims)


def permute(shape, order):
    if len(order) != len(shape) or has_group(shape):
        return None
    axes = [axis(a, len(shape)) for a in order]
    if None in axes or len(set(axes)) != len(axes):
        return None
    return tuple(shape[a] for a in axes)


def reverse(shape):
    return None if has_group(shape) else tuple(reversed(shape))


def product(dims):
    result = ONE
    for dim in dims:
        result = mul_dims(result, dim)
    return result


def cancel_common(numerator: list, denominator: list, sizes) -> tuple[list, list]:
    """Remove dims that appear (provably equal) on both sides of a ratio of products."""
    numerator, denominator = list(numerator), list(denominator)
    for dim in list(denominator):
        for index, candidate in enumerate(numerator):
            if same_dim(candidate, dim, sizes):
                numerator.pop(index)
                denominator.remove(dim)
                break
    return numerator, denominator


def reshape(shape, new_dims, sizes):
    """view/reshape with explicit dims; one `-1` (passed as None) is solved from the element count."""
    missing = [i for i, d in enumerate(new_dims) if d is None]
    if len(missing) > 1:
        return None
    if not missing:
        return tuple(new_dims)
    if shape is None or has_group(shape):
        return None
    known = [d for d in new_dims if d is not None]
    numerator, denominator = cancel_common(list(shape), known, sizes)
    solved = floordiv_dims(product(numerator), product(denominator)) if denominator else product(numerator)
    result = list(new_dims)
    result[missing[0]] = solved
    return tuple(result)


def unsqueeze(shape, index: int):
    rank = len(shape) + 1
    position = axis(index, rank)
    if position is None or has_group(shape):
        return None
    return tuple(shape[:position]) + (ONE,) + tuple(shape[position:])


def squeeze(shape, index: int | None = None):
    if index is None:
        return None if has_group(shape) else tuple(d for d in shape if d != ONE)
    position = axis(index, len(shape), shape)
    if position is None:
        return None
    if shape[position] != ONE:
        return tuple(shape)  # torch.squeeze(dim) leaves a non-1 dim alone
    return tuple(shape[:position]) + tuple(shape[position + 1:])


def broadcast(a, b, sizes):
    """Elementwise broadcasting: aligned from the right; 1 stretches; disagreement → Unknown."""
    if a is None or b is None:
        return None
    if has_group(a) or has_group(b):
        return a if len(a) >= len(b) else b
    width = max(len(a), len(b))
    a = (ONE,) * (width - len(a)) + tuple(a)
    b = (ONE,) * (width - len(b)) + tuple(b)
    result = []
    for x, y in zip(a, b):
        if same_dim(x, y, sizes):
            result.append(x)
        elif x == ONE:
            result.append(y)
        elif y == ONE:
            result.append(x)
        else:
            result.append(Unknown("broadcast"))
    return tuple(result)


def split_sizes(shape, size_or_sections, dim: int, sizes):
    """`x.split(n, dim)` (equal chunks of n) or `x.split([a, b], dim)`: one shape per piece.
    Equal chunks of size n give total // n pieces, known only when that ratio evaluates."""
    position = axis(dim, len(shape), shape)
    if position is None:
        return None
    if isinstance(size_or_sections, list):
        return [tuple(shape[:position]) + (s,) + tuple(shape[position + 1:]) for s in size_or_sections]
    from shape_annotations import evaluate_dim

    total = shape[position]
    count = None
    numerator, denominator = cancel_common(_factors(total), _factors(size_or_sections), sizes)
    if not denominator and len(numerator) == 1 and type(numerator[0]) is Const:
        count = numerator[0].value
    elif not denominator and not numerator:
        count = 1
    else:
        whole, piece = evaluate_dim(total, sizes), evaluate_dim(size_or_sections, sizes)
        if whole is not None and piece and whole % piece == 0:
            count = whole // piece
    if count is None or count > 64:
        return None
    piece_shape = tuple(shape[:position]) + (size_or_sections,) + tuple(shape[position + 1:])
    return [piece_shape] * count


def chunk(shape, chunks: int, dim: int):
    position = axis(dim, len(shape), shape)
    if position is None or chunks <= 0 or chunks > 64:
        return None
    length = shape[position]
    if type(length) is Const:
        # torch's rule for a known length: pieces of ceil(n / chunks), the last one shorter, and
        # so possibly fewer than `chunks` pieces (5 in 4 chunks is 2, 2, 1)
        if length.value == 0:
            return None
        step = -(-length.value // chunks)
        sizes = [min(step, length.value - start) for start in range(0, length.value, step)]
        return [tuple(shape[:position]) + (Const(n),) + tuple(shape[position + 1:]) for n in sizes]
    piece = floordiv_dims(length, Const(chunks))
    return [tuple(shape[:position]) + (piece,) + tuple(shape[position + 1:])] * chunks


def unbind(shape, dim: int):
    """The pieces of `unbind(dim)`: known only for a literal size (at most 64 pieces)."""
    position = axis(dim, len(shape), shape)
    if position is None or type(shape[position]) is not Const or not 0 < shape[position].value <= 64:
        return None
    return [tuple(shape[:position]) + tuple(shape[position + 1:])] * shape[position].value


def _factors(dim) -> list:
    """Split a product expression into its factors (`3*C` → [3, C]) for cancellation."""
    from shape_annotations import BinOp

    if type(dim) is BinOp and dim.op == "*":
        return _factors(dim.left) + _factors(dim.right)
    return [dim]


def expand(shape, new_dims):
    """`expand(*sizes)`: -1 (None) keeps the existing dim; new leading dims are added."""
    if shape is None or has_group(shape) or len(new_dims) < len(shape):
        return None
    offset = len(new_dims) - len(shape)
    result = []
    for index, dim in enumerate(new_dims):
        if dim is None:
            if index < offset:
                return None
            result.append(shape[index - offset])
        else:
            result.append(dim)
    return tuple(result)


def repeat(shape, repeats):
    """torch `repeat(*sizes)`: each dim multiplied; extra leading sizes add dims."""
    if shape is None or has_group(shape) or len(repeats) < len(shape):
        return None
    offset = len(repeats) - len(shape)
    padded = (ONE,) * offset + tuple(shape)
    return tuple(mul_dims(d, r) for d, r in zip(padded, repeats))


def concatenate(shapes, dim: int, sizes):
    if not shapes or any(s is None for s in shapes):
        return None
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        return None
    position = axis(dim, rank, shapes[0])
    if position is None:
        return None
    total = shapes[0][position]
    for other in shapes[1:]:
        from shape_annotations import BinOp, simplify_dim

        total = simplify_dim(BinOp("+", total, other[position]))
    base = list(shapes[0])
    for other in shapes[1:]:
        for index, (x, y) in enumerate(zip(base, other)):
            if index != position and not same_dim(x, y, sizes):
                base[index] = Unknown("cat")
    base[position] = total
    return tuple(base)


def stack(shapes, dim: int, sizes):
    if not shapes or any(s is None for s in shapes):
        return None
    first = shapes[0]
    if any(len(s) != len(first) for s in shapes):
        return None
    expanded = unsqueeze(first, dim)
    return None if expanded is None else _with_count(expanded, dim, len(shapes))


def _with_count(shape, dim: int, count: int):
    position = axis(dim, len(shape))
    dims = list(shape)
    dims[position] = Const(count)
    return tuple(dims)


def reduce(shape, dims, keepdim: bool):
    """sum/mean/amax over `dims` (None = all)."""
    if dims is None:
        return (ONE,) * len(shape) if keepdim else ()
    positions = set()
    for d in dims:
        position = axis(d, len(shape), shape)
        if position is None:
            return None
        positions.add(position)
    if keepdim:
        return tuple(ONE if i in positions else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in positions)


def flattened(shape, start: int, end: int):
    """`x.flatten(start, end)` (and nn.Flatten's call): the dims from start to end merged into
    their product; None when the axes do not fit the rank."""
    if shape is None or has_group(shape):
        return None
    first, last = axis(start, len(shape)), axis(end, len(shape))
    if first is None or last is None or first > last:
        return None
    return tuple(shape[:first]) + (product(shape[first: last + 1]),) + tuple(shape[last + 1:])
