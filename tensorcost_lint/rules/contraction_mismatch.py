"""TCL101 and TCL102: contractions that torch, numpy or jax will reject at run time."""

from __future__ import annotations

from ..analysis.problems import (
    AttentionRanks,
    ContractionMismatch,
    DimensionNumbers,
    EinsumContractError,
    GroupedRanks,
    LinearWeightRank,
    OperandsMisfit,
    RankMismatch,
    ScalarOperand,
    TooManyAxes,
    UnequalBatches,
)
from ..analysis.site_registry import SITES, shown_name
from .base import Example, Rule
from .messages import einsum_broadcast_text, einsum_contract_text, shape_text

_TORCH_MATMUL = "[torch.matmul](https://pytorch.org/docs/stable/generated/torch.matmul.html)"


def _misfit_text(fact: OperandsMisfit) -> str:
    """A fixed einsum's own problem, named after the call the user wrote."""
    inner = fact.inner
    text = einsum_contract_text(inner) if isinstance(inner, EinsumContractError) else einsum_broadcast_text(inner)
    what = "dot_general contraction mismatch" if fact.call == "dot_general" else f"{fact.call} shape mismatch"
    return text.replace("einsum contract error", what)


def _attention_text(fact: AttentionRanks) -> str:
    if fact.layout == "bshd":
        return "dot_product_attention expects [B, T, N, H] operands"
    return "attention operands of different ranks: " + ", ".join(shape_text(s) for s in fact.shapes)


class MatmulContractionMismatch(Rule):
    code = "TCL101"
    name = "matmul-contraction-mismatch"
    summary = "matmul contraction mismatch (lhs last dim ≠ rhs contracted dim), incl. torch.matmul's 1-D/2-D rules"
    severity = "error"
    what_it_does = (
        "Checks every contraction that is not an einsum ("
        + ", ".join(f"`{shown_name(spec)}`" if spec.form != "module" else shown_name(spec)
                    for spec in SITES if spec.model not in ("einsum", "einops"))
        + "): the lhs's last dim must equal the rhs's contracted dim (`rhs[-2]`, or `rhs[0]` for a 1-D rhs), "
        "`mm` takes 2-D and `bmm` 3-D operands with equal batches, and a fixed contraction (`torch.X` that is "
        "one einsum) must fit that einsum."
    )
    why_bad = "The call raises a RuntimeError when it first runs — possibly hours into a job, on the first long batch."
    example = "scores = q @ k  # q: [batch, heads, seq, d_head], k: [batch, heads, seq, d_head]"
    use_instead = "scores = q @ k.transpose(-2, -1)"
    references = (_TORCH_MATMUL,
                  "[numpy.matmul](https://numpy.org/doc/stable/reference/generated/numpy.matmul.html)")
    facts = (RankMismatch, ScalarOperand, ContractionMismatch, UnequalBatches, LinearWeightRank, AttentionRanks,
             DimensionNumbers, OperandsMisfit, GroupedRanks)
    _WORDS = {
        RankMismatch: lambda f: f"torch.{f.function} expects {f.rank}-D operands, got {shape_text(f.lhs)} and "
                                f"{shape_text(f.rhs)}",
        ScalarOperand: lambda f: "matmul of a 0-D (scalar) operand",
        ContractionMismatch: lambda f: f"matmul contraction mismatch: {f.reason}",
        UnequalBatches: lambda f: f"torch.bmm needs equal batch dims, got {shape_text(f.lhs)} and {shape_text(f.rhs)}",
        LinearWeightRank: lambda f: f"linear weight must be 2-D, got {shape_text(f.weight)}",
        AttentionRanks: _attention_text,
        DimensionNumbers: lambda f: ("dot_general dimension number out of range" if f.out_of_range
                                     else "dot_general contracting/batch dims differ in count"),
        OperandsMisfit: _misfit_text,
        GroupedRanks: lambda f: (f"grouped_mm takes rows [S, K] with weights [G, K, N], or two 3-D operands; got "
                                 f"{shape_text(f.lhs)} and {shape_text(f.rhs)}"),
    }

    def message(self, fact, sizes) -> str:
        return self._WORDS[type(fact)](fact)
    valid = (
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def scores(q: Float[Tensor, "b h s d"], k: Float[Tensor, "b h s d"]):\n'
                '    return q @ k.transpose(-2, -1)\n', {"dims": {"b": 2, "h": 8, "s": 128, "d": 64}}),
    )
    invalid = (
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def scores(q: Float[Tensor, "b h s d"], k: Float[Tensor, "b h s d"]):\n'
                '    return q @ k\n', {"dims": {"b": 2, "h": 8, "s": 128, "d": 64}}),
        Example("import torch\n\n\ndef mix(a, b):\n    x = torch.randn(4, 16, 32)\n    y = torch.randn(16, 32)\n"
                "    return torch.bmm(x, y)\n"),
    )


class EinsumContractMismatch(Rule):
    code = "TCL102"
    name = "einsum-contract-error"
    summary = "einsum subscripts do not fit the operands: count ≠ rank, one index bound to two sizes, output index absent"
    severity = "error"
    what_it_does = (
        "Binds each einsum index letter positionally to its operand's dims (letters are local labels, never config "
        "dims) and checks the subscripts against the operands: one term per operand, one letter per dim, one size "
        "per letter, and every output letter present in some input."
    )
    why_bad = "torch.einsum, np.einsum and jnp.einsum raise at run time; an index bound to two sizes is a wrong axis."
    example = 'torch.einsum("bhqd,bhkd->bhqk", q, v_t)  # v_t: [batch, heads, d_head, seq]'
    use_instead = 'torch.einsum("bhqd,bhkd->bhqk", q, k)'
    references = ("[torch.einsum](https://pytorch.org/docs/stable/generated/torch.einsum.html)",
                  "[numpy.einsum](https://numpy.org/doc/stable/reference/generated/numpy.einsum.html)")
    facts = (EinsumContractError, TooManyAxes)

    def message(self, fact, sizes) -> str:
        if isinstance(fact, TooManyAxes):
            return "too many distinct axes in einops pattern"
        return einsum_contract_text(fact)
    valid = (
        Example('import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def scores(q: Float[Tensor, "b h s d"], k: Float[Tensor, "b h s d"]):\n'
                '    return torch.einsum("bhqd,bhkd->bhqk", q, k)\n', {"dims": {"b": 2, "h": 8, "s": 128, "d": 64}}),
    )
    invalid = (
        Example('import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def scores(q: Float[Tensor, "b h s d"], k: Float[Tensor, "b h d s"]):\n'
                '    return torch.einsum("bhqd,bhkd->bhqk", q, k)\n', {"dims": {"b": 2, "h": 8, "s": 128, "d": 64}}),
        Example('import numpy as np\n\n\ndef mix(a: "np.ndarray"):\n    x = np.zeros((4, 5))\n'
                '    return np.einsum("ijk->ij", x)\n'),
    )
