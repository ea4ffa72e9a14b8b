"""Shapes through einops: `rearrange`, `repeat`, `reduce` and the axes of `einops.einsum`.

The identifier rules per operation are einops' own (`_prepare_transformation_recipe`): rearrange
keeps the same identifiers on both sides, repeat may add axes (sizes from keywords or anonymous
ints), reduce may drop them. A group on the input side with one unknown member is solved from the
composite dim by exact division (`b (h d) -> b h d`, h=8: d = D//8); an axis length given as a
keyword that contradicts the input shape is a ShapeError with the pattern offset of the axis.
"""

from __future__ import annotations

from collections.abc import Mapping

from .dim_algebra import floordiv_dims, mul_dims, same_dim
from .dim_records import Const, DimExpr, Unknown, render_dim
from .einops_grammar import (
    ELLIPSIS,
    AxisItem,
    AxisList,
    EinopsPattern,
    has_ellipsis,
    names_of,
    parse_einops_pattern,
)
from .errors import ShapeError

__all__ = [
    "EinopsPattern",
    "einops_einsum_axes",
    "parse_einops_pattern",
    "rearrange_shape",
    "reduce_shape",
    "repeat_shape",
]

Lengths = Mapping[str, "DimExpr | int"]


Shape = tuple[DimExpr, ...]


def rearrange_shape(pattern: str | EinopsPattern, input_shape: Shape, axis_lengths: Lengths) -> Shape:
    return _transform("rearrange", pattern, input_shape, axis_lengths)


def repeat_shape(pattern: str | EinopsPattern, input_shape: Shape, axis_lengths: Lengths) -> Shape:
    return _transform("repeat", pattern, input_shape, axis_lengths)


def reduce_shape(pattern: str | EinopsPattern, input_shape: Shape, axis_lengths: Lengths) -> Shape:
    return _transform("reduce", pattern, input_shape, axis_lengths)


def _transform(op: str, pattern: str | EinopsPattern, shape: Shape, lengths_in: Lengths) -> Shape:
    parsed = pattern if type(pattern) is EinopsPattern else parse_einops_pattern(pattern)  # type: ignore[arg-type]
    if len(parsed.inputs) != 1:
        count = len(parsed.inputs)
        raise ShapeError(f"{op} takes one input axis-list, the pattern has {count}", _comma(parsed))
    left, right = parsed.inputs[0], parsed.output
    left_at = parsed.input_offsets[0] if parsed.input_offsets else ()
    right_at = parsed.output_offsets
    _validate(op, parsed, left, right, left_at, right_at)
    lengths = {name: (Const(v) if type(v) is int else v) for name, v in lengths_in.items()}
    used = set(names_of(left)) | set(names_of(right))
    for name in lengths:
        if name not in used:
            raise ShapeError(
                f"axis {name!r} is given a length but is not used in the pattern", 0, len(parsed.text) or 1
            )
    bound, ellipsis_dims = _bind_input(left, left_at, tuple(shape), lengths, parsed.text)
    if op == "repeat":
        for name in names_of(right):
            if name not in bound:
                if name not in lengths:
                    raise ShapeError(
                        f"repeat needs a size for new axis {name!r} (pass {name}=...)",
                        _offset_of(right, right_at, name),
                    )
                bound[name] = lengths[name]
    return _output(right, bound, ellipsis_dims)


def _comma(parsed: EinopsPattern) -> int:
    at = parsed.text.find(",")
    return max(at, 0)


def _offset_of(items: AxisList, offsets: tuple[int, ...], name: str) -> int:
    for item, at in zip(items, offsets):
        if item == name or (type(item) is tuple and name in item):
            return at
    return 0


def _validate(
    op: str,
    parsed: EinopsPattern,
    left: AxisList,
    right: AxisList,
    left_at: tuple[int, ...],
    right_at: tuple[int, ...],
) -> None:
    for items, offsets in ((left, left_at), (right, right_at)):
        seen: set[str] = set()
        for name in names_of(items):
            if name == "_":
                raise ShapeError(f"'_' is not an axis name in {op}", _offset_of(items, offsets, name))
            if name in seen:
                raise ShapeError(f"duplicate axis {name!r}", _offset_of(items, offsets, name), len(name))
            seen.add(name)
    arrow = parsed.text.find("->")
    if has_ellipsis(right) and not has_ellipsis(left):
        raise ShapeError("'...' on the output side but not on the input side", arrow + 2)
    if any(type(item) is tuple and ELLIPSIS in item for item in left):
        raise ShapeError("'...' inside parentheses is not allowed on the input side", 0)
    left_names, right_names = set(names_of(left)), set(names_of(right))
    big_left = [i for i, item in enumerate(left) if _non_unitary(item)]
    big_right = [i for i, item in enumerate(right) if _non_unitary(item)]
    if op == "rearrange":
        if big_left or big_right:
            at = left_at[big_left[0]] if big_left else right_at[big_right[0]]
            raise ShapeError("rearrange allows no anonymous axes other than 1", at)
        only = (left_names ^ right_names) | ({ELLIPSIS} if has_ellipsis(left) != has_ellipsis(right) else set())
        if only:
            raise ShapeError(f"identifiers only on one side of the pattern: {', '.join(sorted(only))}", arrow, 2)
    elif op == "repeat":
        if big_left:
            raise ShapeError("repeat allows no anonymous axes other than 1 on the input side", left_at[big_left[0]])
        extra = left_names - right_names | ({ELLIPSIS} if has_ellipsis(left) and not has_ellipsis(right) else set())
        if extra:
            names = ", ".join(sorted(extra))
            raise ShapeError(f"identifiers on the input side of repeat but not the output: {names}", arrow, 2)
    else:
        if big_right:
            raise ShapeError("reduce allows no anonymous axes other than 1 on the output side", right_at[big_right[0]])
        extra = right_names - left_names
        if extra:
            names = ", ".join(sorted(extra))
            raise ShapeError(f"identifiers on the output side of reduce but not the input: {names}", arrow, 2)


def _non_unitary(item: AxisItem) -> bool:
    members = item if type(item) is tuple else (item,)
    return any(type(m) is int and m != 1 for m in members)


def _bind_input(
    left: AxisList, offsets: tuple[int, ...], shape: tuple[DimExpr, ...], lengths: dict[str, DimExpr], text: str
) -> tuple[dict[str, DimExpr], tuple[DimExpr, ...]]:
    explicit = sum(1 for item in left if item != ELLIPSIS)
    has_ell = ELLIPSIS in left
    if (has_ell and len(shape) < explicit) or (not has_ell and len(shape) != explicit):
        expected = f"at least {explicit}" if has_ell else str(explicit)
        raise ShapeError(f"pattern expects {expected} dims, the input has {len(shape)}", 0, max(1, text.find("->")))
    bound: dict[str, DimExpr] = {}
    ellipsis_dims: tuple[DimExpr, ...] = ()
    position = 0
    for item, at in zip(left, offsets or (0,) * len(left)):
        if item == ELLIPSIS:
            width = len(shape) - explicit
            ellipsis_dims = shape[position:position + width]
            position += width
            continue
        dim = shape[position]
        position += 1
        members = item if type(item) is tuple else (item,)
        _bind_group(members, dim, at, bound, lengths)
    return bound, ellipsis_dims


def _bind_group(
    members: tuple, dim: DimExpr, at: int, bound: dict[str, DimExpr], lengths: dict[str, DimExpr]
) -> None:
    known: list[DimExpr] = []
    unknown: list[str] = []
    for member in members:
        if type(member) is int:
            known.append(Const(member))
        elif member in lengths:
            known.append(lengths[member])
            bound[member] = lengths[member]
        else:
            unknown.append(member)
    if len(unknown) > 1:
        raise ShapeError(f"could not infer sizes for {', '.join(unknown)} (give all but one as keywords)", at)
    product: DimExpr = Const(1)
    for factor in known:
        product = mul_dims(product, factor)
    if not unknown:
        if len(members) == 1 and type(members[0]) is str and type(dim) is not Unknown:
            bound[members[0]] = dim  # the input's own dim is the better record of this axis
        if same_dim(product, dim, {}) is False:
            raise ShapeError(f"shape mismatch: {render_dim(dim)} != {render_dim(product)}", at)
        return
    name = unknown[0]
    if type(dim) is Unknown:
        bound[name] = Unknown(name)
        return
    try:
        bound[name] = floordiv_dims(dim, product)
    except ShapeError:
        raise ShapeError(
            f"shape mismatch: cannot divide axis of length {render_dim(dim)} into chunks of {render_dim(product)}",
            at,
        ) from None


def _output(right: AxisList, bound: dict[str, DimExpr], ellipsis_dims: tuple[DimExpr, ...]) -> tuple[DimExpr, ...]:
    out: list[DimExpr] = []
    for item in right:
        if item == ELLIPSIS:
            out.extend(ellipsis_dims)
        elif type(item) is tuple:
            product: DimExpr = Const(1)
            for member in item:
                if member == ELLIPSIS:
                    for d in ellipsis_dims:
                        product = mul_dims(product, d)
                else:
                    product = mul_dims(product, Const(member) if type(member) is int else bound[member])
            out.append(product)
        else:
            out.append(Const(item) if type(item) is int else bound[item])
    return tuple(out)


def einops_einsum_axes(pattern: str, n_operands: int) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """Per-operand axis names and output axis names of `einops.einsum(a, b, "b h q d, b h k d -> b h q k")`.

    '...' is kept as the name "..."; groups and anonymous axes are refused (einops does too);
    an input may repeat a name (`i i -> i`, a diagonal), the output may not.
    """
    parsed = parse_einops_pattern(pattern)
    if len(parsed.inputs) != n_operands:
        raise ShapeError(
            f"pattern has {len(parsed.inputs)} inputs for {n_operands} operands", 0, max(1, pattern.find("->"))
        )
    inputs: list[tuple[str, ...]] = []
    for items, offsets in zip(parsed.inputs, parsed.input_offsets):
        inputs.append(_einsum_names(items, offsets))
    output = _einsum_names(parsed.output, parsed.output_offsets)
    seen: set[str] = set()
    available = {name for names in inputs for name in names}
    for name, at in zip(output, parsed.output_offsets):
        if name in seen:
            raise ShapeError(f"axis {name!r} appears twice in the einsum output", at, len(name))
        seen.add(name)
        if name not in available:
            raise ShapeError(f"unknown axis {name!r} on the output side of einsum", at, len(name))
    return tuple(inputs), output


def _einsum_names(items: AxisList, offsets: tuple[int, ...]) -> tuple[str, ...]:
    names: list[str] = []
    for item, at in zip(items, offsets):
        if type(item) is tuple:
            raise ShapeError("einops.einsum does not support axis groups", at)
        if type(item) is int:
            raise ShapeError("einops.einsum does not support anonymous axes", at)
        names.append(item)
    return tuple(names)
