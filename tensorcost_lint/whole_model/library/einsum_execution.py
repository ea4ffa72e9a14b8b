"""The FLOPs torch's eager `einsum` really executes, step by step along the path the costing planned
(the runtime count a whole model's total is held to; the per-site costing keeps opt_einsum's
convention of 1 per point for a pure product).

For each pair, torch (aten `einsum`, `sumproduct_pair`) first sums out with `sum` each label that
only one operand has and nothing later needs, then contracts the labels both have that nothing
later needs with one `bmm` over every label left — 2 FLOPs per point, what FlopCounterMode counts —
or, when no such label is left (an outer or Hadamard product: `'b i, j -> b i j'`), multiplies them
with `mul`, which it does not count. A label of size 1 in both operands is no contraction either
(broadcast away, as `mul`). One operand alone is a `sum` or a view: no FLOPs."""

from __future__ import annotations


def torch_einsum_flops(plans) -> int | None:
    """Total FLOPs of the steps' `bmm`s; None when a step is not a pair or one operand (a path
    torch never takes: its own steps are pairwise)."""
    total = 0
    for plan in plans:
        contraction = plan.contraction
        sizes = dict(contraction.sizes)
        terms = [set(term) for term in contraction.inputs]
        if len(terms) == 1:
            continue
        if len(terms) != 2:
            return None
        left, right = terms
        kept = set(contraction.output)
        summed_alone = (left ^ right) - kept  # `a.sum(dim)` / `b.sum(dim)` before the pair
        contracted = {label for label in (left & right) - kept if sizes[label] != 1}
        if not contracted:
            continue  # `mul`
        points = 1
        for label in (left | right) - summed_alone:
            points *= sizes[label]
        total += 2 * points
    return total
