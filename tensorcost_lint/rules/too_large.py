"""TCL404: a call site whose counts pass 2**63-1, the range tensorcost counts exactly (issue 15 D3).

Every count is an exact int checked against 2**63-1 and refused above it, never wrapped or rounded;
before this rule such a site was silently unresolved, so the larger the problem the quieter the tool.
"""

from __future__ import annotations

from decimal import Decimal

from estimator.counting import MAX_COUNT

from ..analysis.problems import CountTooLarge
from .base import Example, Rule

# the estimator's field names, in words
_COUNTS = {"flops": "FLOP count", "elements": "element count", "intermediate_elements": "intermediate's element count",
           "live_elements": "live element count", "traffic_bytes": "bytes moved", "retained_bytes": "retained bytes",
           "scores": "attention scores' size", "bytes": "byte count"}


def _count_words(field: str) -> str:
    if field.endswith(".shape"):  # a tensor's elements or bytes: `operand0.shape`, `output.shape`
        return f"{field[:-len('.shape')]} tensor size"
    return _COUNTS.get(field, f"{field.replace('_', ' ')} count")


def approximately(count: int) -> str:
    """`1.5e20`: a count past the exact range, shown only approximately."""
    return f"{Decimal(count):.1e}".replace("e+", "e")


class TooLargeToCost(Rule):
    code = "TCL404"
    name = "too-large-to-cost"
    summary = "a call site's FLOPs, bytes or elements exceed 2**63−1, the range counted exactly, so it has no numbers"
    severity = "warning"
    what_it_does = (
        "Counts every FLOP, byte and element of a call site as an exact integer checked against 2**63−1 "
        "(≈ 9.22e18). A site whose counts pass that range gets no numbers — no ledger, no budget checks — and "
        "this rule says so, with the FLOPs as executed (recounted without the ceiling, shown approximately), "
        "their formula and the sizes bound to its dims."
    )
    why_bad = (
        "A count that large is almost always a bug or a costly order: `np.einsum(\"ij,jk,kl,lm->im\", ...)` over "
        "8192×8192 operands runs numpy's default single loop, ≈ 1.5e20 FLOP — days on any machine — where the "
        "best pairwise order needs 3.3 TFLOP. Other tools wrap such counts silently (int64) or round them "
        "(float); tensorcost refuses them, and this rule keeps the refusal from passing unseen."
    )
    example = 'np.einsum("ij,jk,kl,lm->im", a, b, c, d)  # n = 8192'
    use_instead = 'np.einsum("ij,jk,kl,lm->im", a, b, c, d, optimize="optimal")  # TCL403 gives the order'
    options = "`dims` (the sizes bound), `execution.count` (multiplies every count)"
    references = ("[numpy.einsum_path](https://numpy.org/doc/stable/reference/generated/numpy.einsum_path.html)",)
    facts = (CountTooLarge,)
    invalid = (
        Example('import numpy as np\nfrom jaxtyping import Float\n\n\n'
                'def chain(a: Float[np.ndarray, "n n"], b: Float[np.ndarray, "n n"], c: Float[np.ndarray, "n n"],\n'
                '          d: Float[np.ndarray, "n n"]):\n'
                '    return np.einsum("ij,jk,kl,lm->im", a, b, c, d, optimize="optimal")\n',
                {"dims": {"n": 2**22}}),
        Example('import torch\n\n\ndef project():\n    a = torch.zeros(1024, 1024)\n    b = torch.zeros(1024, 1024)\n'
                '    return a @ b\n', {"execution": {"count": 2**63 - 1}}),
    )
    valid = (
        Example('import numpy as np\nfrom jaxtyping import Float\n\n\n'
                'def chain(a: Float[np.ndarray, "n n"], b: Float[np.ndarray, "n n"], c: Float[np.ndarray, "n n"],\n'
                '          d: Float[np.ndarray, "n n"]):\n'
                '    return np.einsum("ij,jk,kl,lm->im", a, b, c, d, optimize="optimal")\n',
                {"dims": {"n": 8192}}),
    )

    def check_site(self, result, context):
        fact = result.cost.too_large
        if fact is not None:
            yield self.at_site(context, result, self.message(fact, context.sizes))

    def message(self, fact: CountTooLarge, sizes: dict) -> str:
        head = f"too large to cost exactly: `{fact.expression}`"
        bound = ", ".join(f"{name}={size}" for name, size in fact.sizes)
        per_run = "" if fact.runs == 1 else f" per run × execution.count {fact.runs}"
        if fact.flops is not None and fact.flops > MAX_COUNT:
            formula = "" if fact.formula is None else f"{fact.formula.render()} FLOP"
            with_sizes = f" with {bound}" if bound else ""
            needs = f"{formula}{with_sizes}{per_run}, " if formula else ""
            return (f"{head} as executed needs {needs}≈ {approximately(fact.flops)} FLOP, which exceeds 2**63−1 "
                    f"(≈ 9.22e18): no numbers are reported for this site")
        what = _count_words(fact.count)
        notes = [f"with {bound}"] if bound else []
        if fact.runs != 1:
            notes.append(f"× execution.count {fact.runs}")
        with_sizes = f" ({', '.join(notes)})" if notes else ""
        return (f"{head}: its {what}{with_sizes} exceeds 2**63−1 (≈ 9.22e18): no numbers are reported "
                f"for this site")
