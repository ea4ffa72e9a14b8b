"""Symbolic shape model of each kind of call site, on top of the estimator's generic rules.

Every contraction is reduced to one einsum view — label strings per operand and output, and the
symbolic dim each label is bound to — so FLOPs formulas, numbers and rules share one description.
`problems` are typed facts (analysis.problems) of what torch/numpy/jax would reject or broadcast
silently; `undecided` records dims we could not prove equal (the site stays unresolved, no finding).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from estimator import ContractionMismatch as MatmulRefused
from estimator import INDEX_LETTERS, EinsumError, analyse_matmul, bind_labels, parse_subscripts
from estimator.matmul_shapes import RANK_MISMATCH, SAME_BATCH, SHARED_OPERAND, SIZE_ONE
from shape_annotations import Const, render_dim, same_dim

from .problems import (
    AttentionRanks,
    BatchBroadcast,
    ContractionMismatch,
    DimensionNumbers,
    EinsumBroadcast,
    EinsumContractError,
    GroupedRanks,
    LinearWeightRank,
    OperandsMisfit,
    RankMismatch,
    ScalarOperand,
    ShapeProblem,
    SharedOperandBroadcast,
    TooManyAxes,
    UnequalBatches,
)



@dataclass(frozen=True)
class SiteShapes:
    inputs: tuple[str, ...] = ()  # label string per operand
    output: str = ""
    dims: dict = field(default_factory=dict)  # label -> DimExpr
    output_shape: tuple | None = None
    broadcast: str = SAME_BATCH
    problems: tuple[ShapeProblem, ...] = ()
    undecided: tuple = ()
    attention: bool = False  # a fused attention call (two matmuls, no materialized scores)
    operands: tuple = ()  # operand shapes as the labels describe them (a linear weight transposed)

    @property
    def summed(self) -> bool:
        return bool(set("".join(self.inputs)) - set(self.output))

    @property
    def failed(self) -> bool:
        return any(p.fails for p in self.problems)


def shape_text(shape) -> str:
    return "[" + ", ".join(render_dim(d) for d in shape) + "]"


def _compare(sizes):
    return lambda a, b: same_dim(a, b, sizes)


def is_one(dim) -> bool:
    return dim == Const(1)


def _broadcast_problem(kind: str, lhs, rhs, lhs_batch, rhs_batch) -> ShapeProblem | None:
    if kind in (SIZE_ONE, RANK_MISMATCH):
        return BatchBroadcast(tuple(lhs), tuple(rhs), tuple(lhs_batch), tuple(rhs_batch), kind == SIZE_ONE)
    return None


def model_matmul(lhs: tuple, rhs: tuple, sizes, *, strict_broadcast: bool = False, variant: str = "matmul") -> SiteShapes:
    """`lhs @ rhs` with torch.matmul semantics; variants mm/bmm add their rank rules."""
    rank_rules = {"mm": (2, 2), "bmm": (3, 3)}
    if variant in rank_rules and (len(lhs), len(rhs)) != rank_rules[variant]:
        return SiteShapes(problems=(RankMismatch(variant, rank_rules[variant][0], tuple(lhs), tuple(rhs)),))
    if not lhs or not rhs:
        return SiteShapes(problems=(ScalarOperand(),))
    try:
        shapes = analyse_matmul(lhs, rhs, _compare(sizes), is_one, render_dim)
    except MatmulRefused as error:
        return SiteShapes(problems=(ContractionMismatch(error.reason),))
    if variant == "bmm" and shapes.broadcast != SAME_BATCH:
        return SiteShapes(problems=(UnequalBatches(tuple(lhs), tuple(rhs)),))
    problems = []
    problem = _broadcast_problem(shapes.broadcast, lhs, rhs, shapes.lhs_batch, shapes.rhs_batch)
    if problem:
        problems.append(problem)
    elif shapes.broadcast == SHARED_OPERAND and strict_broadcast:
        problems.append(SharedOperandBroadcast(tuple(lhs), tuple(rhs)))
    lhs_labels, rhs_labels, out_labels = shapes.einsum()
    dims: dict = {}
    for labels, shape in ((lhs_labels, lhs), (rhs_labels, rhs)):
        for label, dim in zip(labels, shape):
            if label not in dims or dims[label] == Const(1):
                dims[label] = dim
    return SiteShapes((lhs_labels, rhs_labels), out_labels, dims, shapes.output, shapes.broadcast,
                      tuple(problems), shapes.undecided, operands=(tuple(lhs), tuple(rhs)))


def model_linear(x: tuple, weight: tuple, sizes) -> SiteShapes:
    """F.linear / nn.Linear: x [..., in] with weight [out, in] → [..., out] (x @ weight.T)."""
    if len(weight) != 2:
        return SiteShapes(problems=(LinearWeightRank(tuple(weight)),))
    return model_matmul(x, (weight[1], weight[0]), sizes)


def model_dot(lhs: tuple, rhs: tuple, sizes) -> SiteShapes:
    """np.dot / jnp.dot: matmul for ≤ 2-D; for N-D, last axis of lhs against second-to-last of rhs,
    no broadcasting (output lhs[:-1] + rhs[:-2] + rhs[-1:])."""
    if not lhs or not rhs:  # a 0-D operand: numpy multiplies elementwise, nothing is summed
        other = INDEX_LETTERS[: len(lhs) or len(rhs)]
        subscripts = f",{other}->{other}" if not lhs else f"{other},->{other}"
        return model_einsum(subscripts, [lhs, rhs], sizes)
    if len(lhs) <= 2 and len(rhs) <= 2:
        return model_matmul(lhs, rhs, sizes)
    left = INDEX_LETTERS[: len(lhs)]
    right = list(INDEX_LETTERS[len(lhs): len(lhs) + len(rhs)])
    right[-2 if len(rhs) >= 2 else -1] = left[-1]
    right = "".join(right)
    output = left[:-1] + "".join(c for c in right if c != left[-1])
    return model_einsum(f"{left},{right}->{output}", [lhs, rhs], sizes)


def model_einsum(subscripts: str, shapes: list, sizes) -> SiteShapes:
    try:
        spec = parse_subscripts(subscripts, [len(s) for s in shapes])
        dims, broadcasts, undecided = bind_labels(spec, shapes, _compare(sizes), is_one, render_dim)
    except EinsumError as error:
        return SiteShapes(problems=(EinsumContractError(subscripts, error.reason),))
    problems = [EinsumBroadcast(subscripts, label, a, b) for label, a, b in broadcasts]
    output_shape = tuple(dims[label] for label in spec.output)
    return SiteShapes(spec.inputs, spec.output, dims, output_shape, SAME_BATCH, tuple(problems), tuple(undecided),
                      operands=tuple(tuple(s) for s in shapes))


def model_named_einsum(operand_axes, output_axes, shapes: list, sizes, pattern: str) -> SiteShapes:
    """einops.einsum: axis *names* are local labels like letters; map them to letters."""
    letters: dict[str, str] = {}
    for name in [n for axes in operand_axes for n in axes] + list(output_axes):
        if name not in letters and name != "...":
            if len(letters) >= len(INDEX_LETTERS):
                return SiteShapes(problems=(TooManyAxes(pattern),))
            letters[name] = INDEX_LETTERS[len(letters)]

    def term(axes):
        return "".join("..." if name == "..." else letters[name] for name in axes)

    subscripts = ",".join(term(axes) for axes in operand_axes) + "->" + term(output_axes)
    shapes_model = model_einsum(subscripts, shapes, sizes)
    if shapes_model.problems:
        names = tuple((letter, name) for name, letter in letters.items())
        problems = tuple(replace(p, pattern=pattern, axis_names=names) for p in shapes_model.problems)
        return SiteShapes(shapes_model.inputs, shapes_model.output, shapes_model.dims,
                          shapes_model.output_shape, shapes_model.broadcast, problems, shapes_model.undecided,
                          operands=shapes_model.operands)
    return shapes_model


def model_dot_general(lhs: tuple, rhs: tuple, contracting, batch, sizes) -> SiteShapes:
    """lax.dot_general(((lc, rc), (lb, rb))): output = batch dims, lhs free dims, rhs free dims."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = contracting, batch
    for axes, shape in ((lhs_contract, lhs), (lhs_batch, lhs), (rhs_contract, rhs), (rhs_batch, rhs)):
        if any(not -len(shape) <= a < len(shape) for a in axes):
            return SiteShapes(problems=(DimensionNumbers(out_of_range=True),))
    if len(lhs_contract) != len(rhs_contract) or len(lhs_batch) != len(rhs_batch):
        return SiteShapes(problems=(DimensionNumbers(out_of_range=False),))
    left = list(INDEX_LETTERS[: len(lhs)])
    right = list(INDEX_LETTERS[len(lhs): len(lhs) + len(rhs)])
    for la, ra in list(zip(lhs_contract, rhs_contract)) + list(zip(lhs_batch, rhs_batch)):
        right[ra] = left[la]
    batch_labels = [left[a] for a in lhs_batch]
    lhs_free = [c for i, c in enumerate(left) if i % len(lhs) not in {a % len(lhs) for a in (*lhs_contract, *lhs_batch)}]
    rhs_free = [c for i, c in enumerate(right) if i % len(rhs) not in {a % len(rhs) for a in (*rhs_contract, *rhs_batch)}]
    output = "".join(batch_labels + lhs_free + rhs_free)
    model = model_einsum(f"{''.join(left)},{''.join(right)}->{output}", [lhs, rhs], sizes)
    if model.problems:
        return SiteShapes(problems=tuple(OperandsMisfit("dot_general", p) for p in model.problems))
    return model


def model_attention(query: tuple, key: tuple, value: tuple, sizes, layout: str) -> SiteShapes:
    """Fused attention: layout "bhsd" (torch SDPA: [..., L, E]) or "bshd" (jax: [B, T, N, H]).
    Costed as its two matmuls, QKᵀ and PV; scores are not materialized."""
    if layout == "bshd":
        if not (len(query) == len(key) == len(value) == 4):
            return SiteShapes(problems=(AttentionRanks(layout, (query, key, value)),))
        subscripts = "bqhd,bkhd,bkhe->bqhe"
    else:
        rank = len(query)
        if rank < 2 or len(key) != rank or len(value) != rank:
            return SiteShapes(problems=(AttentionRanks(layout, (query, key, value)),))
        batch = INDEX_LETTERS[: rank - 2]
        subscripts = f"{batch}qd,{batch}kd,{batch}ke->{batch}qe"
    model = model_einsum(subscripts, [query, key, value], sizes)
    problems = tuple(OperandsMisfit("attention", p) if p.fails else p for p in model.problems)
    return SiteShapes(model.inputs, model.output, model.dims, model.output_shape, model.broadcast,
                      problems, model.undecided, attention=True, operands=model.operands)


def model_grouped_mm(lhs: tuple, rhs: tuple, sizes) -> SiteShapes:
    """`F.grouped_mm(rows [S, K], weights [G, K, N], offs=ends)`: the rows come sorted by group and
    each meets its group's [K, N] matrix, so the FLOPs are one [S, K] @ [K, N] matmul's (2·S·K·N,
    whatever the split) and the view reads one group's matrix — a lower bound on the weights'
    traffic, which is all G matrices when every group has rows. Both operands 3-D is a batch of
    groups (`gmk,gkn->gmn`). Two 2-D operands (the weight gradient's form, [K, S] @ [S, N] into
    [G, K, N]) are not modelled."""
    if len(lhs) == 2 and len(rhs) == 3:
        model = model_einsum("sk,kn->sn", [lhs, rhs[1:]], sizes)
    elif len(lhs) == 3 and len(rhs) == 3:
        model = model_einsum("gmk,gkn->gmn", [lhs, rhs], sizes)
    else:
        return SiteShapes(problems=(GroupedRanks(tuple(lhs), tuple(rhs)),))
    problems = tuple(OperandsMisfit("grouped_mm", p) if p.fails else p for p in model.problems)
    return SiteShapes(model.inputs, model.output, model.dims, model.output_shape, model.broadcast,
                      problems, model.undecided, operands=model.operands)


def _contraction(spec, shapes, sizes, literal, strict):
    """A call that is a fixed einsum (`torch.addbmm`: "bij,bjk->ik"); a misfit is a contraction
    mismatch of that call, as torch reports it, not an einsum contract error."""
    model = model_einsum(literal.get("subscripts", spec.subscripts), shapes, sizes)  # a grouped convolution's own
    problems = tuple(OperandsMisfit(spec.name, p) if p.fails else p for p in model.problems)
    return SiteShapes(model.inputs, model.output, model.dims, model.output_shape, model.broadcast,
                      problems, model.undecided, operands=model.operands)


# shape model of a registry entry (site_registry.MODELS) -> (spec, shapes, sizes, literal, strict) -> SiteShapes;
# `literal` holds what the call wrote literally: subscripts, einops axes, dimension numbers
SHAPE_MODELS = {
    "matmul": lambda spec, shapes, sizes, literal, strict: model_matmul(*shapes, sizes, strict_broadcast=strict),
    "mm": lambda spec, shapes, sizes, literal, strict: model_matmul(*shapes, sizes, strict_broadcast=strict, variant="mm"),
    "bmm": lambda spec, shapes, sizes, literal, strict: model_matmul(*shapes, sizes, strict_broadcast=strict, variant="bmm"),
    "dot": lambda spec, shapes, sizes, literal, strict: model_dot(*shapes, sizes),
    "linear": lambda spec, shapes, sizes, literal, strict: model_linear(*shapes, sizes),
    "contraction": _contraction,
    "einsum": lambda spec, shapes, sizes, literal, strict: model_einsum(literal["subscripts"], shapes, sizes),
    "einops": lambda spec, shapes, sizes, literal, strict: model_named_einsum(
        literal["axes"], literal["output"], shapes, sizes, literal["pattern"]),
    "dot_general": lambda spec, shapes, sizes, literal, strict: model_dot_general(
        *shapes, literal["contracting"], literal["batch"], sizes),
    "attention": lambda spec, shapes, sizes, literal, strict: model_attention(*shapes, sizes, spec.layout),
    "grouped_mm": lambda spec, shapes, sizes, literal, strict: model_grouped_mm(*shapes, sizes),
}
