"""einops' `pack` and `unpack`, as einops defines them: `pack([x, r], "b * d")` joins tensors along
the axes the one `*` stands for (each tensor's own, flattened) and returns the packed tensor with
the list of what `*` stood for in each; `unpack(x, ps, "b * d")` splits it back. Each takes
(interp, CallArgs), as every rule of the op table."""

from __future__ import annotations

from shape_annotations import BinOp, Const, same_dim, simplify_dim

from .facts import DimFact, SequenceFact, StringFact, TensorFact


def _pattern(interp, node):
    """(axes before `*`, axes after) of a pack pattern (`b * d`), or None: one `*`, plain names."""
    fact = interp.eval(node) if node is not None else None
    if type(fact) is not StringFact:
        return None
    parts = fact.value.split()
    if parts.count("*") != 1 or any(not p.isidentifier() for p in parts if p != "*") or len(set(parts)) != len(parts):
        return None
    star = parts.index("*")
    return star, len(parts) - star - 1


def _product(dims) -> object:
    total = Const(1)
    for dim in dims:
        total = simplify_dim(BinOp("*", total, dim))
    return total


def pack(interp, args):
    """`pack(tensors, pattern)` -> (packed, packed_shapes)."""
    tensors = interp.listed_items(interp.eval(args.get(0, "tensors")))
    pattern = _pattern(interp, args.get(1, "pattern"))
    if pattern is None or not tensors or any(type(t) is not TensorFact or t.shape is None for t in tensors):
        return None
    before, after = pattern
    if any(len(t.shape) < before + after for t in tensors):
        return None  # einops raises: too few dims for the pattern
    sizes = interp.ctx.settings.sizes
    first = tensors[0].shape
    stars, total = [], None
    for tensor in tensors:
        shape = tensor.shape
        kept = (*shape[:before], *shape[len(shape) - after:])
        if any(same_dim(a, b, sizes) is not True for a, b in zip(kept, (*first[:before], *first[len(first) - after:]))):
            return None  # the named axes must agree; not provably so here
        star = tuple(shape[before:len(shape) - after])
        stars.append(SequenceFact(tuple(DimFact(d) for d in star), kind="tuple"))
        count = _product(star)
        total = count if total is None else simplify_dim(BinOp("+", total, count))
    dtypes = {t.dtype for t in tensors}
    packed = TensorFact((*first[:before], total, *first[len(first) - after:]),
                        dtypes.pop() if len(dtypes) == 1 else None, framework=tensors[0].framework)
    return SequenceFact((packed, SequenceFact(tuple(stars), kind="list")), kind="tuple")


def unpack(interp, args):
    """`unpack(tensor, packed_shapes, pattern)` -> one tensor per packed shape."""
    fact = interp.eval(args.get(0, "tensor"))
    shapes = interp.eval(args.get(1, "packed_shapes"))
    pattern = _pattern(interp, args.get(2, "pattern"))
    shapes = interp.listed_items(shapes) if shapes is not None else None
    if pattern is None or type(fact) is not TensorFact or fact.shape is None or not shapes:
        return None
    before, after = pattern
    if len(fact.shape) != before + after + 1:
        return None
    out, total = [], None
    for star in shapes:
        dims = interp.listed_items(star) if star is not None else None
        if dims is None or any(type(d) is not DimFact for d in dims):
            return None
        count = _product(d.dim for d in dims)
        total = count if total is None else simplify_dim(BinOp("+", total, count))
        out.append(TensorFact((*fact.shape[:before], *(d.dim for d in dims), *fact.shape[before + 1:]),
                              fact.dtype, framework=fact.framework))
    if same_dim(total, fact.shape[before], interp.ctx.settings.sizes) is False:
        return None  # einops raises: the shapes do not add up to the packed axis
    return SequenceFact(tuple(out), kind="list")
