"""Tensor layouts as torch computes them, over concrete sizes: contiguous strides, contiguity, and
`view_strides` (torch's `computeStride`: whether a reshape can be a view)."""

from __future__ import annotations

from shape_annotations import evaluate_dim

from ...analysis.facts import TensorFact


def numeric_shape(fact, sizes) -> tuple | None:
    if type(fact) is not TensorFact or fact.shape is None:
        return None
    values = []
    for dim in fact.shape:
        try:
            value = evaluate_dim(dim, sizes)
        except Exception:  # noqa: BLE001 - a group, an inexact `//` or a bad size: not known
            return None
        if value is None:
            return None
        values.append(value)
    return tuple(values)


def contiguous_strides(shape) -> tuple:
    strides, running = [], 1
    for size in reversed(shape):
        strides.append(running)
        running *= size
    return tuple(reversed(strides))


def is_contiguous(sizes, strides) -> bool:
    if sizes is None or strides is None:
        return True
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def view_strides(sizes, strides, new_sizes):
    """torch's `computeStride`: the strides of `new_sizes` viewing (sizes, strides), or None when
    only a copy can have that shape."""
    if sizes is None or strides is None or new_sizes is None:
        return None
    if product(sizes) != product(new_sizes):
        return None
    if not sizes:
        return tuple(1 for _ in new_sizes)
    if product(sizes) == 0:
        return contiguous_strides(new_sizes)
    new_strides = [0] * len(new_sizes)
    view_d = len(new_sizes) - 1
    chunk_base_stride = strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(sizes) - 1, -1, -1):
        tensor_numel *= sizes[tensor_d]
        if tensor_d == 0 or (sizes[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_sizes[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_sizes[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    return tuple(new_strides) if view_d == -1 else None


def product(values) -> int:
    result = 1
    for value in values:
        result *= value
    return result
