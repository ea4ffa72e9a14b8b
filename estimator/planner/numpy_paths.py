"""numpy.einsum_path's choices, reproduced: the path np.einsum(optimize=...) will execute.

numpy carries its own older copies of opt_einsum's searches (numpy/_core/einsumfunc.py), and they
choose differently: a default memory limit of the largest input or output (so no intermediate may
outgrow the operands), a greedy ranked by (-removed size, cost) that drops any pair whose running
cost passes the naive single-loop cost, and an 'optimal' that enumerates every pair sequence
breadth-first and keeps the first cheapest. That enumeration is n!(n-1)!/2^(n-1) sequences: numpy
itself does not finish past ~8 operands, so neither does the model.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from ..errors import EinsumError
from .network import Network

NUMPY_OPTIMAL_LIMIT = 8


def _size(labels, sizes) -> int:
    total = 1
    for label in labels:
        total *= sizes[label]
    return total


def _flop_count(labels, inner, terms: int, sizes) -> int:
    return _size(labels, sizes) * (max(1, terms - 1) + (1 if inner else 0))


def _find_contraction(positions, input_sets, output_set):
    contracted, kept, remaining = set(), set(output_set), []
    for index, labels in enumerate(input_sets):
        if index in positions:
            contracted |= labels
        else:
            remaining.append(labels)
            kept |= labels
    result = kept & contracted
    remaining.append(result)
    return result, remaining, contracted - result, contracted


def _possible(positions, input_sets, output_set, sizes, memory_limit, path_cost, naive_cost):
    result, new_sets, removed, contracted = _find_contraction(positions, input_sets, output_set)
    new_size = _size(result, sizes)
    if new_size > memory_limit:
        return None
    removed_size = sum(_size(input_sets[p], sizes) for p in positions) - new_size
    cost = _flop_count(contracted, removed, len(positions), sizes)
    if path_cost + cost > naive_cost:
        return None  # numpy never picks a pair that would already lose to the single loop
    return [(-removed_size, cost), positions, new_sets]


def _carry_over(results, best):
    """Re-index the pairs not touching `best` for the list after `best` is contracted (numpy
    keeps their old scores rather than recomputing them)."""
    bx, by = best[1]
    carried = []
    for score, (x, y), sets in results:
        if x in best[1] or y in best[1]:
            continue
        del sets[by - int(by > x) - int(by > y)]
        del sets[bx - int(bx > x) - int(bx > y)]
        sets.insert(-1, best[2][-1])
        carried.append((score, (x - int(x > bx) - int(x > by), y - int(y > bx) - int(y > by)), sets))
    return carried


def greedy(input_sets, output_set, sizes, memory_limit):
    n = len(input_sets)
    if n == 1:
        return [(0,)]
    if n == 2:
        return [(0, 1)]
    _, _, removed, contracted = _find_contraction(range(n), input_sets, output_set)
    naive_cost = _flop_count(contracted, removed, n, sizes)
    pairs = itertools.combinations(range(n), 2)
    known: list = []
    path: list = []
    path_cost = 0
    for _ in range(n - 1):
        for positions in pairs:
            if input_sets[positions[0]].isdisjoint(input_sets[positions[1]]):
                continue  # outer products only when nothing else is left
            found = _possible(positions, input_sets, output_set, sizes, memory_limit, path_cost, naive_cost)
            if found is not None:
                known.append(found)
        if not known:
            for positions in itertools.combinations(range(len(input_sets)), 2):
                found = _possible(positions, input_sets, output_set, sizes, memory_limit, path_cost, naive_cost)
                if found is not None:
                    known.append(found)
            if not known:
                path.append(tuple(range(len(input_sets))))
                break
        best = min(known, key=lambda entry: entry[0])
        known = _carry_over(known, best)
        input_sets = best[2]
        newest = len(input_sets) - 1
        pairs = ((i, newest) for i in range(newest))
        path.append(best[1])
        path_cost += best[0][1]
    return path


def optimal(input_sets, output_set, sizes, memory_limit):
    """numpy's breadth-first enumeration, computed by memoised search over operand groupings.

    numpy keeps every sequence that stays within the memory limit and returns the first cheapest
    (sequences in lexicographic order of their pair choices); when a whole level is over the limit
    it takes the first cheapest sequence of the level before and contracts the rest at once. The
    cost still to pay depends only on which operand groups exist, so a memo over groupings finds
    the same sequence in time the groupings allow (Bell(n)) instead of n!(n-1)!/2^(n-1).
    """
    n = len(input_sets)
    output_set = frozenset(output_set)
    union_of = [frozenset(labels) for labels in input_sets]

    @lru_cache(maxsize=None)
    def labels_of(group: int) -> frozenset:
        if group & (group - 1) == 0:
            return union_of[group.bit_length() - 1]
        inside = frozenset().union(*(union_of[i] for i in range(n) if group >> i & 1))
        outside = frozenset().union(*(union_of[i] for i in range(n) if not group >> i & 1))
        return inside & (outside | output_set)

    @lru_cache(maxsize=None)
    def step(a: int, b: int):
        # a group's indices depend only on the group: an index survives iff the output or an
        # operand outside the group still needs it, whatever those operands have become
        contracted = labels_of(a) | labels_of(b)
        result = labels_of(a | b)
        return _size(result, sizes) <= memory_limit, _flop_count(contracted, contracted - result, 2, sizes)

    def moves(groups: tuple[int, ...]):
        for i, j in itertools.combinations(range(len(groups)), 2):
            fits, cost = step(groups[i], groups[j])
            if fits:
                merged = groups[i] | groups[j]
                yield (i, j), cost, frozenset(groups[:i] + groups[i + 1 : j] + groups[j + 1 :] + (merged,)), merged

    @lru_cache(maxsize=None)
    def depth(state: frozenset) -> int:
        return max((1 + depth(after) for _, _, after, _ in moves(tuple(sorted(state)))), default=0)

    full_depth = depth(frozenset(1 << i for i in range(n)))

    @lru_cache(maxsize=None)
    def cheapest(state: frozenset) -> float:
        if n - len(state) == full_depth:
            return 0
        return min((cost + cheapest(after) for _, cost, after, _ in moves(tuple(sorted(state)))), default=float("inf"))

    groups = tuple(1 << i for i in range(n))
    target = cheapest(frozenset(groups))
    path = []
    while n - len(groups) < full_depth:
        for (i, j), cost, after, merged in moves(groups):
            if cost + cheapest(after) == target:
                path.append((i, j))
                groups = groups[:i] + groups[i + 1 : j] + groups[j + 1 :] + (merged,)
                target -= cost
                break
    if full_depth < n - 1:
        path.append(tuple(range(len(groups))))
    return path


def _memory_limit_default(network: Network) -> int:
    """numpy's default: the largest input or the output, in elements."""
    return max(network.elements(term) for term in (*network.inputs, network.output))


def einsum_path(network: Network, optimize) -> tuple[tuple[tuple[int, ...], ...], str]:
    """The path np.einsum(..., optimize=optimize) runs, and how numpy chose it.

    Mirrors numpy.einsum_path's dispatch: True means 'greedy'; False/None a single einsum loop;
    ['einsum_path', (i, j), ...] an explicit path; ('greedy'|'optimal', limit) a memory limit.
    """
    path_type = "greedy" if optimize is True else (False if optimize is None else optimize)
    memory_limit = None
    explicit = None
    if path_type is False or isinstance(path_type, str):
        pass
    elif isinstance(path_type, (list, tuple)) and path_type and path_type[0] == "einsum_path":
        explicit = tuple(tuple(step) for step in path_type[1:])
    elif (
        isinstance(path_type, (list, tuple))
        and len(path_type) == 2
        and isinstance(path_type[0], str)
        and type(path_type[1]) in (int, float)
    ):
        memory_limit, path_type = int(path_type[1]), path_type[0]
    else:
        raise EinsumError("optimize", f"numpy does not understand the path {optimize!r} (TypeError at run time)")
    n = network.operand_count
    input_sets = [set(term) for term in network.inputs]
    output_set = set(network.output)
    if memory_limit is None:
        memory_limit = _memory_limit_default(network)
    if explicit is not None:
        return explicit, "the explicit path given"
    if path_type is False or n in (1, 2) or set("".join(network.inputs)) == output_set:
        return ((tuple(range(n)),), "a single einsum loop (nothing for numpy to optimize)")
    sizes = network.size_dict()
    if path_type == "greedy":
        path = greedy(input_sets, output_set, sizes, memory_limit)
    elif path_type == "optimal":
        if n > NUMPY_OPTIMAL_LIMIT:
            raise EinsumError(
                "optimize",
                f"numpy's 'optimal' enumerates every pair sequence; at {n} operands it does not finish "
                f"(not modelled past {NUMPY_OPTIMAL_LIMIT})",
            )
        path = optimal(input_sets, output_set, sizes, memory_limit)
    else:
        raise EinsumError("optimize", f"numpy has no path strategy {path_type!r} (KeyError at run time)")
    return tuple(tuple(step) for step in path), f"numpy's {path_type!r} search, memory limit {memory_limit} elements"
