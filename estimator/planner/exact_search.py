"""Exact searches: every pairwise order for a few operands, and the optimum by dynamic programming
over operand subsets for more.

The DP is exact because an intermediate's indices depend only on *which* operands it holds (an
index survives iff it is in the output or in an operand outside the group), so the cheapest way to
build a group does not depend on how the rest is built. It considers every split, outer products
included: skipping them (as opt_einsum's 'dp' does by default) can miss the optimum.
"""

from __future__ import annotations

from typing import Iterator

from ..errors import CountOverflow, EinsumError
from .network import Network
from .orders import ContractionOrder, order_cost, tree_path

EXHAUSTIVE_LIMIT = 6  # 945 orders at 6 operands, 10395 at 7: past that a list stops being readable
EXACT_LIMIT = 15  # 3**n/2 splits: ~1.3 s at 15 operands, ~4 s at 16 on one core; beyond, greedy runs
MINIMIZE = ("flops", "size")


class SearchLimit(EinsumError):
    """The network is too large for the requested exact search."""

    trap = "search limit"


def _trees(leaves: tuple[int, ...]) -> Iterator[object]:
    if len(leaves) == 1:
        yield leaves[0]
        return
    first, rest = leaves[0], leaves[1:]
    # The group holding the first leaf is the left child, so each unordered split is seen once.
    for chosen in range(2 ** len(rest) - 1):
        left = (first,) + tuple(r for bit, r in enumerate(rest) if chosen >> bit & 1)
        right = tuple(r for bit, r in enumerate(rest) if not chosen >> bit & 1)
        for left_tree in _trees(left):
            for right_tree in _trees(right):
                yield (left_tree, right_tree)


def enumerate_orders(network: Network) -> tuple[list[ContractionOrder], int]:
    """Every distinct pairwise order (contraction tree) with its canonical path, cheapest first,
    and how many were left out because one of their counts passes 2**63-1."""
    n = network.operand_count
    if n > EXHAUSTIVE_LIMIT:
        raise SearchLimit(
            "operands", f"{n} operands: every order is listed only up to {EXHAUSTIVE_LIMIT}; use the exact DP"
        )
    if n == 1:
        return [order_cost(network, ((0,),), "exhaustive")], 0
    orders, refused = [], 0
    for tree in _trees(tuple(range(n))):
        try:
            orders.append(order_cost(network, tree_path(tree, n), "exhaustive"))
        except CountOverflow:
            refused += 1
    orders.sort(key=lambda o: (o.flops, o.largest_intermediate, o.peak_live_elements, o.path))
    return orders, refused


def all_orders(network: Network) -> list[ContractionOrder]:
    """Every pairwise order for up to 6 operands (orders whose counts overflow are left out)."""
    return enumerate_orders(network)[0]


class _Subsets:
    """Per operand subset S: the index mask of the intermediate S builds and its element count."""

    def __init__(self, network: Network) -> None:
        n = network.operand_count
        self.n, self.full = n, (1 << n) - 1
        self.label_sizes = network.label_sizes
        self.inputs = network.input_masks
        union = [0] * (1 << n)
        for subset in range(1, 1 << n):
            low = subset & -subset
            union[subset] = union[subset ^ low] | self.inputs[low.bit_length() - 1]
        self.kept = [0] * (1 << n)
        for subset in range(1, 1 << n):
            self.kept[subset] = union[subset] & (union[self.full ^ subset] | network.output_mask)
        for index, mask in enumerate(self.inputs):
            self.kept[1 << index] = mask  # an input holds all its labels, summed-only ones too
        # Element counts by table lookup, one 8-label chunk at a time: the DP asks for the size of
        # a fresh label mask at nearly every split, and a per-bit loop there dominated its time.
        self._chunks = []
        for start in range(0, len(self.label_sizes), 8):
            sizes = self.label_sizes[start : start + 8]
            table = [1] * 256
            for byte in range(1, 256):
                low = byte & -byte
                table[byte] = table[byte ^ low] * sizes[low.bit_length() - 1] if low.bit_length() <= len(sizes) else 0
            self._chunks.append(table)
        self.elements = [self.size(mask) for mask in self.kept]

    def size(self, mask: int) -> int:
        found = 1
        for table in self._chunks:
            found *= table[mask & 255]
            mask >>= 8
        return found

    def splits(self, subset: int) -> Iterator[tuple[int, int]]:
        """Each unordered split (A, B) of `subset` once, A holding its lowest operand."""
        low = subset & -subset
        rest = subset ^ low
        part = rest
        while part:
            part = (part - 1) & rest
            yield low | part, rest ^ part


def _bottleneck(subsets: _Subsets) -> int:
    """The smallest achievable largest intermediate (final output included)."""
    worst = [0] * (1 << subsets.n)
    for subset in range(1, subsets.full + 1):
        if subset & (subset - 1) == 0:
            continue
        best = min(max(worst[a], worst[b]) for a, b in subsets.splits(subset))
        worst[subset] = max(best, subsets.elements[subset])
    return worst[subsets.full]


def _cheapest_tree(subsets: _Subsets, limit: int | None):
    """Min FLOPs (then min largest intermediate) over trees whose every step output is <= limit."""
    n, kept, elements, size = subsets.n, subsets.kept, subsets.elements, subsets.size
    chunks = subsets._chunks
    single = chunks[0] if len(chunks) == 1 else None
    unreachable = float("inf")  # compares with exact ints without converting them
    cost: list = [unreachable] * (1 << n)
    largest = [0] * (1 << n)
    split = [0] * (1 << n)
    for index in range(n):
        cost[1 << index] = 0
    # The loop below is the whole search (3**n / 2 splits): kept inline, without a generator.
    for subset in range(3, subsets.full + 1):
        if subset & (subset - 1) == 0 or (limit is not None and elements[subset] > limit):
            continue
        best, best_largest, best_split, out = unreachable, 0, 0, kept[subset]
        floor = elements[subset]  # every split's step touches at least the result's indices
        low = subset & -subset
        rest = subset ^ low
        part = rest
        while part:
            part = (part - 1) & rest
            a = low | part
            b = subset ^ a
            below = cost[a] + cost[b] + floor
            if below > best:
                continue
            both = kept[a] | kept[b]
            step = single[both] if single is not None else size(both)
            total = below - floor + (step + step if both & ~out else step)
            big = largest[a] if largest[a] > largest[b] else largest[b]
            if total < best or (total == best and big < best_largest):
                best, best_largest, best_split = total, big, a
        if best != unreachable:
            cost[subset], largest[subset], split[subset] = best, max(best_largest, elements[subset]), best_split
    if cost[subsets.full] == unreachable:
        return None

    def build(subset: int):
        if subset & (subset - 1) == 0:
            return subset.bit_length() - 1
        a = split[subset]
        return (build(a), build(subset ^ a))

    return build(subsets.full)


def _refuse_limit(memory_limit: int, floor: int):
    raise EinsumError(
        "memory_limit",
        f"no pairwise order keeps every intermediate within {memory_limit} elements "
        f"(the smallest achievable largest intermediate is {floor})",
    )


def optimal_order(network: Network, minimize: str = "flops", memory_limit: int | None = None) -> ContractionOrder:
    """The exact optimum over every pairwise order.

    minimize="flops": fewest FLOPs, ties broken by the smaller largest intermediate.
    minimize="size": smallest largest intermediate, then fewest FLOPs among those.
    memory_limit (elements): every step's output, the final one included, must fit; refused with
    the smallest achievable largest intermediate when no order fits.
    """
    if minimize not in MINIMIZE:
        raise EinsumError("minimize", f"expected one of {', '.join(MINIMIZE)}, got {minimize!r}")
    if memory_limit is not None and (type(memory_limit) is not int or memory_limit < 1):
        raise EinsumError("memory_limit", f"expected a positive number of elements, got {memory_limit!r}")
    n = network.operand_count
    if n > EXACT_LIMIT:
        raise SearchLimit("operands", f"{n} operands: the exact search runs up to {EXACT_LIMIT}; use greedy_order")
    if n == 1:
        return order_cost(network, ((0,),), "optimal")
    subsets = _Subsets(network)
    limit = memory_limit
    if minimize == "size":
        limit = _bottleneck(subsets)
        if memory_limit is not None and limit > memory_limit:
            _refuse_limit(memory_limit, limit)
    tree = _cheapest_tree(subsets, limit)
    if tree is None:
        _refuse_limit(memory_limit, _bottleneck(subsets))
    strategy = "optimal" if minimize == "flops" else "optimal-size"
    return order_cost(network, tree_path(tree, n), strategy)
