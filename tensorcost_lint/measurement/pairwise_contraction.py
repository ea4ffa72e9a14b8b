"""A two-operand einsum as one batched matrix multiply, the way torch.einsum and opt_einsum's
BLAS path run it: permute each operand to (batch, free, contracted), reshape, matmul, reshape back.

numpy's own einsum only reaches BLAS for some patterns (never for batched ones) and otherwise runs
a C loop far below the machine's peak; measuring that loop against a BLAS-rate bound would make
every bound look loose for the wrong reason. Labels repeated inside one operand (diagonals) are
left to np.einsum.
"""

from __future__ import annotations


def _order(labels: str, first: list, second: list, third: list) -> list[int]:
    return [labels.index(c) for c in first + second + third]


def pairwise_plan(subscripts: str):
    """(a's summed-alone labels, b's, batch, left, contracted, right, output) or None when the
    pattern has a diagonal."""
    inputs, output = subscripts.split("->")
    a, b = inputs.split(",")
    if len(set(a)) != len(a) or len(set(b)) != len(b):
        return None
    a_alone = [c for c in a if c not in b and c not in output]  # summed before the product
    b_alone = [c for c in b if c not in a and c not in output]
    batch = [c for c in output if c in a and c in b]
    left = [c for c in output if c in a and c not in b]
    right = [c for c in output if c in b and c not in a]
    contracted = [c for c in a if c in b and c not in output]
    return a_alone, b_alone, batch, left, contracted, right, output


def _prepared(np, subscripts: str, a, b):
    """(a-side function, b-side function, product shape, output permutation) for one contraction.
    The side functions sum away labels only one operand has, then permute and reshape."""
    a_alone, b_alone, batch, left, contracted, right, output = pairwise_plan(subscripts)
    a_labels, b_labels = subscripts.split("->")[0].split(",")
    size = {c: n for c, n in zip(a_labels, a.shape)}
    size.update((c, n) for c, n in zip(b_labels, b.shape) if size.get(c, 1) == 1)

    def extent(labels) -> int:
        total = 1
        for c in labels:
            total *= size[c]
        return total

    def side(labels, alone, first, middle, last):
        axes = tuple(labels.index(c) for c in alone)
        kept = "".join(c for c in labels if c not in alone)
        order = _order(kept, first, middle, last)
        shape = (extent(first), extent(middle), extent(last))
        if axes:
            return lambda x: x.sum(axis=axes).transpose(order).reshape(shape)
        return lambda x: x.transpose(order).reshape(shape)

    produced = batch + left + right
    return (side(a_labels, a_alone, batch, left, contracted), side(b_labels, b_alone, batch, contracted, right),
            [size[c] for c in produced], [produced.index(c) for c in output])


def pairwise_contract(np, subscripts: str, a, b):
    if pairwise_plan(subscripts) is None:
        return np.einsum(subscripts, a, b)
    a_side, b_side, shape, order = _prepared(np, subscripts, a, b)
    return np.matmul(a_side(a), b_side(b)).reshape(shape).transpose(order)


def pairwise_call(np, subscripts: str, a, b):
    """A zero-argument call computing the contraction of `a` and `b`. Permutes and reshapes that
    are free views are done once here, out of the timed call: no framework pays for a view, but
    Python does, and on a cold cache that interpreter time can exceed a small matmul's."""
    if pairwise_plan(subscripts) is None:
        return lambda: np.einsum(subscripts, a, b)
    a_side, b_side, shape, order = _prepared(np, subscripts, a, b)
    left, right = a_side(a), b_side(b)
    a_free, b_free = np.shares_memory(left, a), np.shares_memory(right, b)
    if order == sorted(order):
        if a_free and b_free:
            return lambda: np.matmul(left, right).reshape(shape)
    if a_free and b_free:
        return lambda: np.matmul(left, right).reshape(shape).transpose(order)
    return lambda: np.matmul(a_side(a), b_side(b)).reshape(shape).transpose(order)
