"""TCL201: batch dims that broadcast silently inside a contraction."""

from __future__ import annotations

from ..analysis.problems import BatchBroadcast, EinsumBroadcast, SharedOperandBroadcast
from .base import Example, Rule
from .messages import einsum_broadcast_text, shape_text


class ImplicitBatchBroadcast(Rule):
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
    references = ("[Broadcasting semantics](https://pytorch.org/docs/stable/notes/broadcasting.html)",)
    facts = (BatchBroadcast, SharedOperandBroadcast, EinsumBroadcast)

    def message(self, fact, sizes) -> str:
        if isinstance(fact, EinsumBroadcast):
            return einsum_broadcast_text(fact)
        pair = f"{shape_text(fact.lhs)} x {shape_text(fact.rhs)}"
        if isinstance(fact, SharedOperandBroadcast):
            return (f"implicit batch broadcast: {pair} shares an operand without batch dims across the batch "
                    "(broadcast_policy: strict)")
        what = "a size-1 batch dim against a full one" if fact.size_one else "batch dims of different ranks"
        return (f"implicit batch broadcast: {pair} broadcasts {what} ({shape_text(fact.lhs_batch)} vs "
                f"{shape_text(fact.rhs_batch)}); expand explicitly or fix the batch dims")
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
