"""TCL403: a multi-operand einsum executed in a costly order."""

from __future__ import annotations

from fractions import Fraction

from estimator.planner import fix_argument, optimal_order

from ..findings import Fix
from .base import Example, Rule
from .messages import format_flops


def _ratio_text(ratio: Fraction) -> str:
    return f"{float(ratio):,.1f}" if ratio < 1000 else f"{float(ratio):,.0f}"


class CostlyContractionOrder(Rule):
    code = "TCL403"
    name = "costly-contraction-order"
    summary = "the contraction path the framework will execute costs ≥ budgets.contraction_regret × the optimum"
    severity = "warning"
    what_it_does = (
        "For einsums of three or more operands, models the path each framework really executes — `np.einsum` "
        "with its default `optimize=False` runs one loop over every index; `torch.einsum` contracts left to right "
        "(unless `frameworks.torch_einsum: opt-einsum`); `jnp.einsum` and `opt_einsum.contract` follow opt_einsum's "
        "`auto` choice — and compares its FLOPs with the optimal pairwise order."
    )
    why_bad = (
        "Algebraically equal orders differ by orders of magnitude: `ij,jk,kl->il` on 1000×1000, 1000×64, 64×10 "
        "costs 1.92 GFLOP as one numpy loop and 21.3 MFLOP in the best order — ×90 for the same result."
    )
    example = 'np.einsum("ij,jk,kl->il", a, b, c)'
    use_instead = 'np.einsum("ij,jk,kl->il", a, b, c, optimize="optimal")'
    options = "`budgets.contraction_regret` (default 4), `frameworks.torch_einsum`"
    valid = (
        Example('import numpy as np\n\n\ndef chain(a, b, c):\n    a = np.zeros((1000, 1000))\n    b = np.zeros((1000, 64))\n'
                '    c = np.zeros((64, 10))\n    return np.einsum("ij,jk,kl->il", a, b, c, optimize="optimal")\n'),
    )
    invalid = (
        Example('import numpy as np\n\n\ndef chain(a, b, c):\n    a = np.zeros((1000, 1000))\n    b = np.zeros((1000, 64))\n'
                '    c = np.zeros((64, 10))\n    return np.einsum("ij,jk,kl->il", a, b, c)\n'),
        Example('import torch\n\n\ndef chain():\n    a = torch.zeros(1000, 1000)\n    b = torch.zeros(1000, 64)\n'
                '    c = torch.zeros(64, 10)\n    return torch.einsum("ij,jk,kl->il", a, b, c)\n'),
    )

    def check_site(self, result, context):
        cost, site = result.cost, result.site
        if not cost.resolved or cost.execution is None or cost.network is None:
            return
        best = optimal_order(cost.network)
        executed = cost.execution.flops
        if best.flops <= 0 or executed <= best.flops:
            return
        ratio = Fraction(executed, best.flops)
        regret = context.config.budgets.contraction_regret
        if ratio < Fraction(str(regret)):
            return
        framework = cost.execution.framework
        fix = None
        remedy = fix_argument(framework, best.path)
        if site.framework == "numpy" and "optimize" not in site.options:
            remedy = 'pass optimize="optimal"'
            fix = Fix('add optimize="optimal"', site.end_line, site.end_column - 1, site.end_line,
                      site.end_column - 1, ', optimize="optimal"')
        elif site.framework == "torch" and context.config.torch_einsum == "left-to-right":
            path = ", ".join(str(tuple(step)) for step in best.path)
            remedy = (f"reorder the operands, use opt_einsum.contract(..., optimize=[{path}]), or set "
                      "frameworks.torch_einsum: opt-einsum if opt_einsum is installed")
        yield self.at_site(context, result, (
            f"costly contraction order: {cost.execution.description} costs {format_flops(executed)} vs "
            f"{format_flops(best.flops)} for the best order {[tuple(s) for s in best.path]} "
            f"(×{_ratio_text(ratio)} ≥ contraction_regret {regret}); {remedy}"), fix=fix)
