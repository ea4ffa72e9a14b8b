"""What the analysis found wrong, as typed facts: no rule codes, no sentences.

Each rule names the facts it reports and owns their words (`rules/`): the analysis says *what*
(`ContractionMismatch(reason)`, `BatchBroadcast(lhs, rhs, ...)`), a rule says how to tell the user.
Shapes are tuples of DimExprs; `reason` fields carry the estimator's own reason for its refusal.
"""

from __future__ import annotations

from dataclasses import dataclass


class ShapeProblem:
    """A problem with a call's operand shapes. `fails`: the framework raises when the call runs, so
    the site is not costed; otherwise it runs, silently doing something the code did not say."""

    fails = False


# -- the call raises -------------------------------------------------------------------------------

@dataclass(frozen=True)
class RankMismatch(ShapeProblem):
    """`torch.mm` / `torch.bmm` given operands of another rank."""

    function: str  # "mm" | "bmm"
    rank: int
    lhs: tuple
    rhs: tuple
    fails = True


@dataclass(frozen=True)
class ScalarOperand(ShapeProblem):
    fails = True


@dataclass(frozen=True)
class ContractionMismatch(ShapeProblem):
    """lhs's last dim ≠ rhs's contracted dim (or a 1-D rule of torch.matmul)."""

    reason: str
    fails = True


@dataclass(frozen=True)
class UnequalBatches(ShapeProblem):
    """`torch.bmm` needs equal batch dims: it never broadcasts."""

    lhs: tuple
    rhs: tuple
    fails = True


@dataclass(frozen=True)
class LinearWeightRank(ShapeProblem):
    weight: tuple
    fails = True


@dataclass(frozen=True)
class GroupedRanks(ShapeProblem):
    """`grouped_mm` takes rows [S, K] with weights [G, K, N], or two 3-D operands."""

    lhs: tuple
    rhs: tuple
    fails = True


@dataclass(frozen=True)
class AttentionRanks(ShapeProblem):
    layout: str  # "bhsd": ranks differ; "bshd": not all four-dimensional
    shapes: tuple
    fails = True


@dataclass(frozen=True)
class DimensionNumbers(ShapeProblem):
    """lax.dot_general's dimension numbers: out of range, or contracting/batch counts differ."""

    out_of_range: bool
    fails = True


@dataclass(frozen=True)
class EinsumContractError(ShapeProblem):
    """The subscripts do not fit the operands. For einops, `pattern` and the axis name of each
    letter the analysis gave them (`axis_names`), so words can use the user's names."""

    subscripts: str
    reason: str
    pattern: str | None = None
    axis_names: tuple = ()  # (letter, axis name) pairs
    fails = True


@dataclass(frozen=True)
class TooManyAxes(ShapeProblem):
    pattern: str
    fails = True


@dataclass(frozen=True)
class OperandsMisfit(ShapeProblem):
    """A call modelled as a fixed einsum (attention, dot_general, `torch.addbmm`) whose operands
    do not fit it: `inner` is the einsum's own problem."""

    call: str  # "attention", "dot_general", or the registry name
    inner: ShapeProblem
    fails = True


# -- the call runs, broadcasting silently ----------------------------------------------------------

@dataclass(frozen=True)
class BatchBroadcast(ShapeProblem):
    lhs: tuple
    rhs: tuple
    lhs_batch: tuple
    rhs_batch: tuple
    size_one: bool  # a size-1 batch dim against a full one; else batch dims of different ranks


@dataclass(frozen=True)
class SharedOperandBroadcast(ShapeProblem):
    """Under `broadcast_policy: strict`: an operand without batch dims shared across the batch."""

    lhs: tuple
    rhs: tuple


@dataclass(frozen=True)
class EinsumBroadcast(ShapeProblem):
    subscripts: str
    label: str  # the einsum letter (a private character for an ellipsis dim)
    a: object
    b: object
    pattern: str | None = None
    axis_names: tuple = ()


# -- shape contracts (annotations, shape comments, pragmas) ----------------------------------------

@dataclass(frozen=True)
class Unparseable:
    """A shape string, shape comment, pragma or einops pattern that cannot be read."""

    what: str  # "shape annotation" | "shape comment" | "tensorcost pragma" | "einops pattern"
    detail: str  # the grammar's reason
    static: bool = True  # False: it parses, but only a run could read it (an f-string)


@dataclass(frozen=True)
class Contradiction:
    """A declared shape (annotation, shape comment, return annotation) that provably differs from
    the shape the code gives the value: by rank (`index` None), by one dim, or by dtype."""

    what: str  # "annotation" | "shape comment" | "return annotation"
    declared: tuple
    inferred: tuple
    index: int | None = None
    declared_dtype: str | None = None
    inferred_dtype: str | None = None


@dataclass(frozen=True)
class EinopsMisfit:
    """An einops reshape whose pattern does not fit its input's declared shape."""

    pattern: str
    detail: str


@dataclass(frozen=True)
class UnitNotParsed:
    """LibCST could not parse lines the stdlib parser accepted: that unit was not analysed."""

    start: int
    end: int
    detail: str


@dataclass(frozen=True)
class Reported:
    """A fact at a place in the file (1-based line and column)."""

    fact: object
    line: int
    column: int


# -- stated by costing ---------------------------------------------------------------------------

@dataclass(frozen=True)
class CountTooLarge:
    """A count of the site (FLOPs, bytes, elements) passes 2**63-1, the range counted exactly, so
    the site has no numbers. `flops` is the executed FLOPs as an unbounded int when the executed
    path is known (it may itself be in range when another count overflowed); `formula` the FLOPs as a
    Polynomial of the dims (None when not a polynomial); `sizes` the bound dims it names."""

    expression: str
    count: str  # the estimator's field that overflowed: "flops", "traffic_bytes", "elements", ...
    flops: int | None
    formula: object  # shape_annotations.Polynomial | None, already times `runs`
    sizes: tuple  # (name, size) pairs
    runs: int = 1  # execution.count
