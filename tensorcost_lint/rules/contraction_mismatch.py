"""TCL101 and TCL102: contractions that torch, numpy or jax will reject at run time."""

from __future__ import annotations

from ..analysis.site_registry import SITES, shown_name
from .base import Example, Rule


class _ProblemRule(Rule):
    def check_site(self, result, context):
        shapes = result.site.shapes
        if shapes is None:
            return
        for problem in shapes.problems:
            if problem.code == self.code:
                yield self.at_site(context, result, problem.message)


class MatmulContractionMismatch(_ProblemRule):
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


class EinsumContractError(_ProblemRule):
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
