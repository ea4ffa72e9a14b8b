"""TCL403: a multi-operand einsum executed in a costly order."""

from __future__ import annotations

from fractions import Fraction

from estimator import EstimatorError
from estimator.planner import build_network, fix_argument, optimal_order, order_cost, tree_path
from shape_annotations import ShapeError, evaluate_dim

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
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def project(h: Float[Tensor, "tokens d"], w_down: Float[Tensor, "d r"], w_up: Float[Tensor, "r d"],\n'
                '            probe: Float[Tensor, "d"]):\n    return h @ w_down @ w_up @ probe\n',
                {"dims": {"tokens": 4096, "d": 4096, "r": 64}}),
    )

    def check_site(self, result, context):
        cost, site = result.cost, result.site
        if "chain" in site.options:
            yield from self._check_chain(result, context)
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

    def _check_chain(self, result, context):
        """`a @ b @ c` runs as written, `(a @ b) @ c`; a matrix chain's best order can be far cheaper."""
        tree, leaves, texts = result.site.options["chain"]
        network = _chain_network(leaves, context.sizes)
        if network is None:
            return
        try:
            written = order_cost(network, tree_path(tree, len(leaves)))
            best = optimal_order(network)
        except EstimatorError:
            return
        if best.flops <= 0 or written.flops <= best.flops:
            return
        ratio = Fraction(written.flops, best.flops)
        regret = context.config.budgets.contraction_regret
        if ratio < Fraction(str(regret)):
            return
        site = result.site
        best_text = _render(_path_tree(best.path, len(leaves)), texts)
        # One line only: rewriting a chain that spans lines would drop the comments between them.
        fix = (Fix(f"write {best_text}", site.line, site.column, site.end_line, site.end_column, best_text)
               if site.line == site.end_line else None)
        yield self.at_site(context, result, (
            f"costly contraction order: `{result.site.expression}` runs as written, "
            f"`{_render(tree, texts)}`, costing {format_flops(written.flops)} vs {format_flops(best.flops)} "
            f"(×{_ratio_text(ratio)} ≥ contraction_regret {regret}); write `{best_text}`"), fix=fix)


_LABELS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _chain_network(leaves, sizes):
    """The chain as an einsum of bound sizes: each link [r, c] shares c with the next link's rows;
    a 1-D first or last operand is a vector. None when it is not such a chain or a size is unknown."""
    count = len(leaves)
    if count + 1 > len(_LABELS):
        return None
    terms, shapes = [], []
    for index, leaf in enumerate(leaves):
        shape = getattr(leaf, "shape", None)
        if shape is None or len(shape) not in (1, 2) or (len(shape) == 1 and 0 < index < count - 1):
            return None
        try:
            values = tuple(evaluate_dim(dim, sizes) for dim in shape)
        except ShapeError:
            return None
        if None in values:
            return None
        if len(shape) == 2:
            terms.append(_LABELS[index] + _LABELS[index + 1])
        else:
            terms.append(_LABELS[index + 1] if index == 0 else _LABELS[index])
        shapes.append(values)
    output = (_LABELS[0] if len(shapes[0]) == 2 else "") + (_LABELS[count] if len(shapes[-1]) == 2 else "")
    try:
        return build_network(",".join(terms) + "->" + output, shapes)
    except EstimatorError:
        return None  # the links do not fit: TCL101 reports that at the failing `@`


def _path_tree(path, count: int):
    """A path back to a tree; a matrix product does not commute, so each pair keeps the order of
    its operands in the chain."""
    current = list(range(count))
    for positions in path:
        parts = sorted((current[p] for p in positions), key=_first_leaf)
        merged = parts[0]
        for part in parts[1:]:
            merged = (merged, part)
        current = [item for index, item in enumerate(current) if index not in positions] + [merged]
    return current[0]


def _first_leaf(tree) -> int:
    return tree if type(tree) is int else _first_leaf(tree[0])


def _render(tree, texts, top: bool = True) -> str:
    if type(tree) is int:
        text = texts[tree]
        return text if top or text.isidentifier() or text.replace(".", "").isidentifier() else f"({text})"
    inner = f"{_render(tree[0], texts, False)} @ {_render(tree[1], texts, False)}"
    return inner if top else f"({inner})"
