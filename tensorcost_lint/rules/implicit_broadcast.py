"""TCL201: batch dims that broadcast silently inside a contraction."""

from __future__ import annotations

from .base import Example
from .contraction_mismatch import _ProblemRule


class ImplicitBatchBroadcast(_ProblemRule):
    code = "TCL201"
    name = "implicit-batch-broadcast"
    summary = "implicit batch broadcast in a matmul/einsum: both operands carry batch dims and they differ"
    severity = "warning"
    what_it_does = (
        "Flags a matmul or einsum whose operands both carry batch dims that differ — a size-1 dim against a "
        "full one, or batch dims of different ranks — so the framework broadcasts one operand silently. Under "
        "`broadcast_policy: strict` a shared operand with no batch dims (`x[b,s,d] @ w[d,f]`) is flagged too."
    )
    why_bad = (
        "A silent broadcast usually means a missing or extra `unsqueeze`: the code runs, the numbers are wrong, "
        "and the broadcast operand may be materialized at full batch size."
    )
    example = "scores = q @ k_t  # q: [batch, heads, seq, d], k_t: [1, heads, d, seq]"
    use_instead = "scores = q @ k_t.expand(batch, -1, -1, -1)  # or fix the batch dim of k_t"
    options = "`broadcast_policy` (`shared-weights` default, or `strict`)"
    valid = (
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def project(x: Float[Tensor, "batch seq d_model"], w: Float[Tensor, "d_model d_ff"]):\n'
                '    return x @ w\n', {"dims": {"batch": 8, "seq": 512, "d_model": 1024, "d_ff": 4096}}),
    )
    invalid = (
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def scores(q: Float[Tensor, "batch heads seq d"], k_t: Float[Tensor, "1 heads d seq"]):\n'
                '    return q @ k_t\n', {"dims": {"batch": 8, "heads": 16, "seq": 512, "d": 64}}),
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def project(x: Float[Tensor, "batch seq d_model"], w: Float[Tensor, "d_model d_ff"]):\n'
                '    return x @ w\n',
                {"dims": {"batch": 8, "seq": 512, "d_model": 1024, "d_ff": 4096}, "broadcast_policy": "strict"}),
    )
