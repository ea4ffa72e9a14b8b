"""`torch.matmul` shape semantics, generic over concrete and symbolic dims.

The same function serves plan files (int dims) and the lint engine (symbolic dims), so the rules a
user sees in the editor are the rules `tensorcost estimate` enforces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Sequence

from .einsum_subscripts import Compare, exact_compare
from .errors import BroadcastRefused, ContractionMismatch, InvalidShape

# Batch broadcast kinds, from harmless to trap.
SAME_BATCH = "same"
SHARED_OPERAND = "shared"  # one operand has no batch dims: x[b,s,d] @ w[d,f]
SIZE_ONE = "size-one"  # a batch dim is 1 on one side and n on the other
RANK_MISMATCH = "rank-mismatch"  # both carry batch dims, of different ranks


@dataclass(frozen=True, slots=True)
class MatmulShapes:
    lhs_batch: tuple
    rhs_batch: tuple
    batch: tuple  # the broadcast batch shape of the output
    m: Hashable | None  # None where a 1-D operand removed the dim
    k: Hashable
    n: Hashable | None
    output: tuple
    broadcast: str
    undecided: tuple = ()  # (what, lhs dim, rhs dim) pairs not provably equal

    def einsum(self) -> tuple[str, str, str]:
        """(lhs, rhs, out) label strings equivalent to this matmul, for FLOP counting."""
        batch_labels = "".join(_BATCH_LABELS[: len(self.batch)])
        lb = batch_labels[len(self.batch) - len(self.lhs_batch) :]
        rb = batch_labels[len(self.batch) - len(self.rhs_batch) :]
        lhs = lb + ("m" if self.m is not None else "") + "k"
        rhs = rb + "k" + ("n" if self.n is not None else "")
        out = batch_labels + ("m" if self.m is not None else "") + ("n" if self.n is not None else "")
        return lhs, rhs, out


_BATCH_LABELS = "abcdefghijlopqrstuvwxyz"


def _fmt(shape: Sequence, describe=str) -> str:
    return "[" + ", ".join(describe(d) for d in shape) + "]"


def is_literal_one(dim) -> bool:
    return dim == 1


def analyse_matmul(
    lhs: Sequence, rhs: Sequence, compare: Compare = exact_compare, is_one=is_literal_one, describe=str
) -> MatmulShapes:
    """Shapes of `lhs @ rhs`; raises ContractionMismatch for what torch.matmul would reject."""
    lhs, rhs = tuple(lhs), tuple(rhs)
    if not lhs or not rhs:
        raise InvalidShape("operands", "matmul needs operands of rank >= 1 (got a scalar)")
    lhs_vector, rhs_vector = len(lhs) == 1, len(rhs) == 1
    m = None if lhs_vector else lhs[-2]
    k_lhs = lhs[-1]
    k_rhs = rhs[0] if rhs_vector else rhs[-2]
    n = None if rhs_vector else rhs[-1]
    undecided = []
    verdict = compare(k_lhs, k_rhs)
    if verdict is False:
        raise ContractionMismatch(
            "shape",
            f"lhs {_fmt(lhs, describe)} contracts dim {describe(k_lhs)} against rhs {_fmt(rhs, describe)} "
            f"dim {describe(k_rhs)}",
        )
    if verdict is None:
        undecided.append(("contracted dim", k_lhs, k_rhs))
    lhs_batch = () if lhs_vector else lhs[:-2]
    rhs_batch = () if rhs_vector else rhs[:-2]
    batch, broadcast, batch_undecided = broadcast_batch(lhs_batch, rhs_batch, compare, lhs, rhs, is_one, describe)
    undecided.extend(batch_undecided)
    output = batch + (() if m is None else (m,)) + (() if n is None else (n,))
    return MatmulShapes(lhs_batch, rhs_batch, batch, m, k_lhs, n, output, broadcast, tuple(undecided))


def broadcast_batch(
    lhs_batch: tuple, rhs_batch: tuple, compare: Compare, lhs=(), rhs=(), is_one=is_literal_one, describe=str
):
    """Broadcast two batch shapes; returns (batch, kind, undecided). `is_one` recognises a size-1
    dim in the caller's representation (an int 1, or a symbolic constant 1)."""
    if not lhs_batch or not rhs_batch:
        kind = SAME_BATCH if lhs_batch == rhs_batch else SHARED_OPERAND
        return lhs_batch or rhs_batch, kind, []
    kind = SAME_BATCH if len(lhs_batch) == len(rhs_batch) else RANK_MISMATCH
    undecided = []
    width = max(len(lhs_batch), len(rhs_batch))
    padded_l = (None,) * (width - len(lhs_batch)) + lhs_batch
    padded_r = (None,) * (width - len(rhs_batch)) + rhs_batch
    batch = []
    for a, b in zip(padded_l, padded_r):
        if a is None or b is None:  # a missing leading dim broadcasts like a 1
            batch.append(b if a is None else a)
            continue
        verdict = compare(a, b)
        if verdict:
            batch.append(a)
        elif is_one(a) or is_one(b):
            batch.append(b if is_one(a) else a)
            if kind == SAME_BATCH:
                kind = SIZE_ONE
        elif verdict is None:
            undecided.append(("batch dim", a, b))
            batch.append(a)
        else:
            raise ContractionMismatch(
                "shape",
                f"batch dims {describe(a)} and {describe(b)} of {_fmt(lhs, describe)} and {_fmt(rhs, describe)} "
                "cannot broadcast",
            )
    return tuple(batch), kind, undecided


def check_broadcast_policy(shapes: MatmulShapes, policy: str) -> None:
    """Refuse broadcasts the policy does not allow (Contract 2 `broadcast_policy`)."""
    if shapes.broadcast == SAME_BATCH:
        return
    if shapes.broadcast == SHARED_OPERAND and policy == "shared-weights":
        return
    raise BroadcastRefused(
        "broadcast_policy",
        f"batch {_fmt(shapes.lhs_batch)} vs {_fmt(shapes.rhs_batch)} broadcasts implicitly "
        f"({shapes.broadcast}) under broadcast_policy={policy}",
    )
