"""Einsum subscripts: parsing, ellipsis expansion and positional binding of index letters.

Index letters are local labels bound positionally to operand dims (`"bhqd,bhkd->bhqk"` binds `q`
and `k` to whatever the operands hold there); they are never looked up as named dimensions.
Dims may be ints or any hashable symbolic value; `compare(a, b)` says whether two are known equal
(True), known different (False) or undecidable (None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

from .errors import EinsumError

Compare = Callable[[Hashable, Hashable], "bool | None"]
MAX_SUBSCRIPT_LENGTH = 1024
# Private labels for dims covered by an ellipsis: outside a-zA-Z, so they never clash with user labels.
# The letters einsum subscripts may use, in the order labels are handed out (numpy and torch accept
# exactly these): every relabelling in the project draws from this one alphabet.
INDEX_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ELLIPSIS_LABELS = tuple(chr(code) for code in range(0x3B1, 0x3B1 + 24))


def _literal_one(dim) -> bool:
    return dim == 1


def exact_compare(a: Hashable, b: Hashable) -> bool:
    return a == b


@dataclass(frozen=True, slots=True)
class EinsumSpec:
    """Subscripts with every ellipsis expanded: one label string per operand, and the output."""

    inputs: tuple[str, ...]
    output: str
    text: str  # as the user wrote it

    @property
    def canonical(self) -> str:
        return ",".join(self.inputs) + "->" + self.output

    def summed_labels(self) -> set[str]:
        return set("".join(self.inputs)) - set(self.output)


def _check_term(term: str, where: str) -> None:
    body = term.replace("...", "")
    if "." in body:
        raise EinsumError("subscripts", f"{where}: '.' only appears as a full ellipsis '...'")
    for char in body:
        if not ("a" <= char <= "z" or "A" <= char <= "Z"):
            raise EinsumError("subscripts", f"{where}: invalid index label {char!r} (use letters a-z, A-Z)")
    if term.count("...") > 1:
        raise EinsumError("subscripts", f"{where}: more than one ellipsis")


def parse_subscripts(text: str, ranks: Sequence[int]) -> EinsumSpec:
    """Parse `text` for operands of the given ranks; refuses what numpy/torch would refuse."""
    if type(text) is not str:
        raise EinsumError("subscripts", "subscripts must be a string")
    if len(text) > MAX_SUBSCRIPT_LENGTH:
        raise EinsumError("subscripts", f"subscripts longer than {MAX_SUBSCRIPT_LENGTH} characters")
    compact = text.replace(" ", "")
    if compact.count("->") > 1:
        raise EinsumError("subscripts", "more than one '->'")
    lhs, arrow, rhs = compact.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise EinsumError(
            "subscripts", f"{len(terms)} subscript terms for {len(ranks)} operands in {text!r}"
        )
    for index, term in enumerate(terms):
        _check_term(term, f"operand {index} subscripts {term!r}")
    if arrow:
        _check_term(rhs, f"output subscripts {rhs!r}")

    ellipsis_rank = 0
    expanded: list[str] = []
    for index, (term, rank) in enumerate(zip(terms, ranks)):
        explicit = len(term.replace("...", ""))
        if "..." in term:
            covered = rank - explicit
            if covered < 0:
                raise EinsumError(
                    "subscripts",
                    f"operand {index}: subscripts {term!r} name {explicit} dims but the operand has rank {rank}",
                )
            ellipsis_rank = max(ellipsis_rank, covered)
            labels = "".join(_ELLIPSIS_LABELS[len(_ELLIPSIS_LABELS) - covered :]) if covered else ""
            term = term.replace("...", labels)
        elif explicit != rank:
            raise EinsumError(
                "subscripts",
                f"operand {index}: subscripts {term!r} name {explicit} dims but the operand has rank {rank}",
            )
        if len(set(term)) != len(term):
            repeated = sorted({c for c in term if term.count(c) > 1})
            raise EinsumError(
                "subscripts",
                f"operand {index}: index {repeated[0]!r} repeated within one operand "
                "(a diagonal/trace); not modelled",
            )
        expanded.append(term)
    if ellipsis_rank > len(_ELLIPSIS_LABELS):
        raise EinsumError("subscripts", "ellipsis covers too many dims")
    ellipsis_labels = "".join(_ELLIPSIS_LABELS[len(_ELLIPSIS_LABELS) - ellipsis_rank :])

    if arrow:
        # An output without '...' sums over the ellipsis dims, as numpy does.
        output = rhs.replace("...", ellipsis_labels)
        if len(set(output)) != len(output):
            raise EinsumError("subscripts", f"output subscripts {rhs!r} repeat an index")
        present = set("".join(expanded))
        for char in output:
            if char not in present:
                raise EinsumError("subscripts", f"output index {char!r} does not appear in any input")
    else:
        counts: dict[str, int] = {}
        for term in expanded:
            for char in term:
                counts[char] = counts.get(char, 0) + 1
        once = sorted(c for c, n in counts.items() if n == 1 and c not in ellipsis_labels)
        output = ellipsis_labels + "".join(once)
    return EinsumSpec(tuple(expanded), output, text)


def bind_labels(
    spec: EinsumSpec, shapes: Sequence[Sequence[Hashable]], compare: Compare = exact_compare, is_one=None,
    describe=str,
):
    """Bind each label to its operand dim. Returns (sizes, broadcasts, undecided).

    `broadcasts` lists (label, dim, other_dim) where one side is the literal 1 and the other is
    not: torch and numpy broadcast there silently, which is an implicit broadcast, not a mismatch.
    A label bound to two dims known to differ is refused; undecidable pairs keep the first binding
    and are reported in `undecided`.
    """
    if is_one is None:
        is_one = _literal_one
    sizes: dict[str, Hashable] = {}
    broadcasts: list[tuple[str, Hashable, Hashable]] = []
    undecided: list[tuple[str, Hashable, Hashable]] = []
    for operand, (term, shape) in enumerate(zip(spec.inputs, shapes)):
        for position, (label, dim) in enumerate(zip(term, shape)):
            if label not in sizes:
                sizes[label] = dim
                continue
            bound = sizes[label]
            verdict = compare(bound, dim)
            if verdict:
                continue
            if is_one(bound) or is_one(dim):
                broadcasts.append((label, bound, dim))
                if is_one(bound):
                    sizes[label] = dim
                continue
            if verdict is None:
                undecided.append((label, bound, dim))
                continue
            shown = label if label.isalpha() and label.isascii() else "..."
            raise EinsumError(
                "subscripts",
                f"index {shown!r} is bound to {describe(bound)} and to {describe(dim)} (operand {operand}, dim {position})",
            )
    return sizes, broadcasts, undecided
