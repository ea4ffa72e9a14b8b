"""TCL401 and TCL402: outputs too large to materialize — quadratic ones first."""

from __future__ import annotations

from shape_annotations import Sym, same_dim

from .base import Example, Rule
from .messages import budget_text, format_bytes, growth_text, sized_shape


def _output_dims(site) -> tuple:
    shapes = site.shapes
    return tuple(shapes.dims[label] for label in shapes.output) if shapes is not None else ()


def quadratic_dims(site, settings, sizes) -> list | None:
    """The two dims that make an output quadratic: one dim twice, or two sequence dims."""
    dims = _output_dims(site)
    for i, a in enumerate(dims):
        for b in dims[i + 1:]:
            if type(a) is Sym and same_dim(a, b, {}) is True:
                return [a, b]
    sequence = [d for d in dims if type(d) is Sym and d.name in settings.sequence_dims]
    return sequence[:2] if len(sequence) >= 2 else None


def _fix_text(site) -> str:
    if len(_output_dims(site)) >= 3:
        fused = {
            "torch": "use F.scaled_dot_product_attention (fused, O(seq) memory)",
            "jax": "use jax.nn.dot_product_attention (fused, O(seq) memory)",
        }.get(site.framework)
        if fused:
            return fused
    return "tile the computation over one of these dims (or fuse it) so the full product never exists"


class QuadraticMaterialization(Rule):
    code = "TCL401"
    name = "quadratic-materialization"
    summary = "quadratic materialization over budget: an output holding one dim twice, or two sequence dims"
    severity = "warning"
    what_it_does = (
        "Finds contractions whose output holds one dimension twice (`[B, nh, T, T]`) or two sequence dims "
        "(`[batch, head, query_pos, key_pos]`, see `sequence_dims`) and whose bytes exceed "
        "`budgets.quadratic_bytes`. The message gives the bytes, the budget and the growth (×4 when seq doubles)."
    )
    why_bad = (
        "A materialized `[b, h, s, s]` attention score tensor grows 4× every time the sequence doubles: the model "
        "that fit at 2k tokens runs out of memory at 8k, and long before that the scores' HBM traffic, not the "
        "FLOPs, sets the speed."
    )
    example = "att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))\natt = F.softmax(att, dim=-1)\ny = att @ v"
    use_instead = "y = F.scaled_dot_product_attention(q, k, v, is_causal=True)"
    options = "`budgets.quadratic_bytes` (default 256MiB), `sequence_dims`"
    valid = (
        Example('import torch.nn.functional as F\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def attend(q: Float[Tensor, "batch heads seq d_head"], k: Float[Tensor, "batch heads seq d_head"],\n'
                '           v: Float[Tensor, "batch heads seq d_head"]):\n'
                '    return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n',
                {"dims": {"batch": 8, "heads": 16, "seq": 8192, "d_head": 128}}),
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def scores(q: Float[Tensor, "batch heads seq d_head"], k: Float[Tensor, "batch heads seq d_head"]):\n'
                '    return q @ k.transpose(-2, -1)\n',
                {"dims": {"batch": 1, "heads": 4, "seq": 256, "d_head": 64}}),
    )
    invalid = (
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def scores(q: Float[Tensor, "batch heads seq d_head"], k: Float[Tensor, "batch heads seq d_head"]):\n'
                '    return q @ k.transpose(-2, -1)\n',
                {"dims": {"batch": 8, "heads": 16, "seq": 8192, "d_head": 128}}, ("TCL401", "TCL402")),
    )

    def check_site(self, result, context):
        cost, site = result.cost, result.site
        if not cost.resolved or site.shapes is None or site.shapes.attention:
            return
        budget = context.settings.budgets.quadratic_bytes
        if cost.output_bytes <= budget:
            return
        pair = quadratic_dims(site, context.settings, context.sizes)
        if pair is None:
            return
        names = [d.name for d in pair]
        growth = growth_text(cost.output_bytes_polynomial, names)
        if growth is None and len(set(names)) == 2:
            growth = f"×4 when {names[0]} and {names[1]} double"
        shape = sized_shape(_output_dims(site), context.sizes)
        yield self.at_site(context, result, (
            f"quadratic materialization: `{site.expression}` materializes {shape} {cost.output_dtype} = "
            f"{format_bytes(cost.output_bytes)} > budget {budget_text(budget)}; {growth}; {_fix_text(site)}"))


class IntermediateOverBudget(Rule):
    code = "TCL402"
    name = "intermediate-over-budget"
    summary = "a materialized output (or einsum intermediate) over budgets.intermediate_bytes"
    severity = "warning"
    what_it_does = (
        "Flags any contraction whose output — or, for a multi-operand einsum, the largest intermediate of the "
        "path the framework executes — exceeds `budgets.intermediate_bytes`."
    )
    why_bad = "One tensor larger than the budget (by default 16 GiB) crowds out activations, weights and optimizer state."
    example = 'logits = torch.einsum("btd,vd->btv", h, embedding)  # [batch, seq, vocab] in float32'
    use_instead = "compute the loss in chunks over seq (or use a fused cross-entropy kernel)"
    options = "`budgets.intermediate_bytes` (default 16GiB)"
    valid = (
        Example('import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def logits(h: Float[Tensor, "batch seq d_model"], emb: Float[Tensor, "vocab d_model"]):\n'
                '    return torch.einsum("btd,vd->btv", h, emb)\n',
                {"dims": {"batch": 4, "seq": 1024, "d_model": 4096, "vocab": 32000}}),
    )
    invalid = (
        Example('import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def logits(h: Float[Tensor, "batch seq d_model"], emb: Float[Tensor, "vocab d_model"]):\n'
                '    return torch.einsum("btd,vd->btv", h, emb)\n',
                {"dims": {"batch": 32, "seq": 8192, "d_model": 4096, "vocab": 128256}}),
    )

    def check_site(self, result, context):
        cost, site = result.cost, result.site
        if not cost.resolved:
            return
        budget = context.settings.budgets.intermediate_bytes
        largest = cost.largest_intermediate_bytes or 0
        if cost.output_bytes > budget:
            shape = sized_shape(_output_dims(site), context.sizes)
            yield self.at_site(context, result, (
                f"materialized output {shape} {cost.output_dtype} = {format_bytes(cost.output_bytes)} exceeds "
                f"budgets.intermediate_bytes {budget_text(budget)}; compute it in chunks or fuse it with its consumer"))
        elif largest > budget:
            yield self.at_site(context, result, (
                f"the executed einsum path materializes an intermediate of {format_bytes(largest)}, over "
                f"budgets.intermediate_bytes {budget_text(budget)}; choose a path with smaller intermediates"))


