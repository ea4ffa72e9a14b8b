"""TCL403: a multi-operand einsum executed in a costly order."""

from __future__ import annotations

from fractions import Fraction

from estimator import EstimatorError
from estimator.counting import MAX_COUNT
from estimator.planner import EXACT_LIMIT, best_order, fix_argument, is_exact

from ..costing.cost_steps import planned_framework
from .findings import Fix
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
    fix_title = 'add optimize="optimal"'
    fix_safety = (
        "The fix (for `np.einsum` calls that pass no `optimize=`) is safe: `optimize=\"optimal\"` changes the "
        "order of the pairwise contractions, never the result beyond floating-point rounding. Other frameworks "
        "get the path or setting to use in the message, not an edit."
    )
    references = ("[numpy.einsum_path](https://numpy.org/doc/stable/reference/generated/numpy.einsum_path.html)",
                  "[opt_einsum: finding optimal paths](https://dgasmith.github.io/opt_einsum/paths/introduction/)")
    valid = (
        Example('import numpy as np\n\n\ndef chain(a, b, c):\n    a = np.zeros((1000, 1000))\n    b = np.zeros((1000, 64))\n'
                '    c = np.zeros((64, 10))\n    return np.einsum("ij,jk,kl->il", a, b, c, optimize="optimal")\n'),
    )
    invalid = (
        Example('import numpy as np\n\n\ndef chain(a, b, c):\n    a = np.zeros((1000, 1000))\n    b = np.zeros((1000, 64))\n'
                '    c = np.zeros((64, 10))\n    return np.einsum("ij,jk,kl->il", a, b, c)\n'),
        Example('import torch\n\n\ndef chain():\n    a = torch.zeros(1000, 1000)\n    b = torch.zeros(1000, 64)\n'
                '    c = torch.zeros(64, 10)\n    return torch.einsum("ij,jk,kl->il", a, b, c)\n'),
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def project(h: Float[Tensor, "tokens d"], w_down: Float[Tensor, "d r"], w_up: Float[Tensor, "r d"],\n'
                '            probe: Float[Tensor, "d"]):\n    return h @ w_down @ w_up @ probe\n',
                {"dims": {"tokens": 4096, "d": 4096, "r": 64}}),
    )

    def check_site(self, result, context):
        cost, site = result.cost, result.site
        if site.chain is not None:
            yield from self._check_chain(result, context)
        if cost.network is None or not (cost.resolved or cost.too_large is not None):
            return
        if cost.execution is None:
            yield from self._check_overflowed(result, context)
            return
        best = best_order(cost.network)
        executed = cost.execution.flops
        if best.flops <= 0 or executed <= best.flops:
            return
        ratio = Fraction(executed, best.flops)
        regret = context.settings.budgets.contraction_regret
        if ratio < Fraction(str(regret)):
            return
        remedy, fix = self._remedy(cost.execution.framework, best, result, context)
        yield self.at_site(context, result, (
            f"costly contraction order: {cost.execution.description} costs {format_flops(executed)} vs "
            f"{format_flops(best.flops)} for {_best_name(best)} {[tuple(s) for s in best.path]} "
            f"(×{_ratio_text(ratio)} ≥ contraction_regret {regret}); {remedy}"), fix=fix)

    def _check_overflowed(self, result, context):
        """The executed order's FLOPs pass 2**63-1 (TCL404 says so) while the best order may be in
        range: the ratio is then more than 2**63 / best, and the order still worth fixing."""
        cost, fact = result.cost, result.cost.too_large
        if fact.runs != 1:  # execution.count multiplied an order in range: the orders were compared once
            return
        if not (fact.flops > MAX_COUNT if fact.flops is not None else fact.count == "flops"):
            return
        try:
            best = best_order(cost.network)
        except EstimatorError:
            return  # the best order overflows too: TCL404 alone
        if best.flops <= 0:
            return
        ratio = Fraction(MAX_COUNT + 1, best.flops)
        regret = context.settings.budgets.contraction_regret
        if ratio < Fraction(str(regret)):
            return
        remedy, fix = self._remedy(planned_framework(result.site), best, result, context)
        yield self.at_site(context, result, (
            f"costly contraction order: more than {format_flops(MAX_COUNT + 1)} as executed vs "
            f"{format_flops(best.flops)} for {_best_name(best)} {[tuple(s) for s in best.path]} "
            f"(×{_ratio_text(ratio)} or more ≥ contraction_regret {regret}); {remedy}"), fix=fix)

    def _remedy(self, framework, best, result, context):
        site = result.site
        fix = None
        remedy = fix_argument(framework, best.path)
        if site.framework == "numpy" and (site.einsum is None or site.einsum.optimize is None):
            remedy = 'pass optimize="optimal"'
            fix = Fix(self.fix_title, site.end_line, site.end_column - 1, site.end_line,
                      site.end_column - 1, ', optimize="optimal"')
        elif site.framework == "torch" and context.settings.torch_einsum == "left-to-right":
            path = ", ".join(str(tuple(step)) for step in best.path)
            remedy = (f"reorder the operands, use opt_einsum.contract(..., optimize=[{path}]), or set "
                      "frameworks.torch_einsum: opt-einsum if opt_einsum is installed")
        return remedy, fix

    def _check_chain(self, result, context):
        """`a @ b @ c` runs as written, `(a @ b) @ c`; a matrix chain's best order can be far cheaper."""
        order, chain = result.cost.chain_order, result.site.chain
        if order is None or order.best_flops <= 0 or order.written_flops <= order.best_flops:
            return
        ratio = Fraction(order.written_flops, order.best_flops)
        regret = context.settings.budgets.contraction_regret
        if ratio < Fraction(str(regret)):
            return
        site = result.site
        best_text = _render(order.best_tree, chain.texts)
        # One line only: rewriting a chain that spans lines would drop the comments between them.
        fix = (Fix(f"write {best_text}", site.line, site.column, site.end_line, site.end_column, best_text)
               if site.line == site.end_line else None)
        yield self.at_site(context, result, (
            f"costly contraction order: `{result.site.expression}` runs as written, "
            f"`{_render(chain.tree, chain.texts)}`, costing {format_flops(order.written_flops)} vs "
            f"{format_flops(order.best_flops)}{'' if order.best_exact else ' for the best order found by heuristic search'} "
            f"(×{_ratio_text(ratio)} ≥ contraction_regret {regret}); write `{best_text}`"), fix=fix)


def _best_name(order) -> str:
    """Above the exact search's operand limit the order is a heuristic's: the best found, not proven optimal."""
    if is_exact(order):
        return "the best order"
    return f"the best order found (heuristic search; the exact search runs up to {EXACT_LIMIT} operands)"


def _render(tree, texts, top: bool = True) -> str:
    if type(tree) is int:
        text = texts[tree]
        return text if top or text.isidentifier() or text.replace(".", "").isidentifier() else f"({text})"
    inner = f"{_render(tree[0], texts, False)} @ {_render(tree[1], texts, False)}"
    return inner if top else f"({inner})"
