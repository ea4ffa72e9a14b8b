"""opt_einsum's path searches, reproduced so we know the path jnp.einsum, opt_einsum.contract and
torch.einsum (with opt_einsum enabled) will choose — without importing opt_einsum.

Reproduced from the behaviour of opt_einsum 3.x `paths.py` (`optimal`, `BranchBound`, `greedy`,
`auto`). Exact reproduction means keeping what decides ties: Python set iteration order of int ids
(so the same set expressions are built the same way), first-found-wins sieves, the heap keys, and
opt_einsum's pair cache keyed by the two index sets. Its searches score a pair as an inner product
only when a *shared* index is summed; the cost we report (find_contraction's) also counts an index
summed out of one operand. Both are kept: one to choose as opt_einsum chooses, one to report.
"""

from __future__ import annotations

import heapq
import itertools
from collections import defaultdict

Labels = frozenset
_UNLIMITED = (None, -1, float("inf"))


def _size(labels, sizes: dict[str, int]) -> int:
    total = 1
    for label in labels:
        total *= sizes[label]
    return total


def _flop_count(labels, inner: bool, terms: int, sizes: dict[str, int]) -> int:
    return _size(labels, sizes) * (max(1, terms - 1) + (1 if inner else 0))


def ssa_to_linear(ssa_path) -> tuple[tuple[int, ...], ...]:
    """Static-single-assignment ids (every tensor ever made has its own id) to positions in the
    shrinking operand list."""
    count = sum(map(len, ssa_path)) - len(ssa_path) + 1
    alive = list(range(count))  # stays sorted: new ids are always the largest
    linear = []
    for next_id, step in enumerate(ssa_path, start=count):
        positions = sorted(alive.index(ssa) for ssa in step)
        for position in reversed(positions):
            del alive[position]
        alive.append(next_id)
        linear.append(tuple(positions))
    return tuple(linear)


def _pair_result(inputs, output, remaining, i, j, sizes):
    """Indices of i x j and opt_einsum's search cost for it."""
    k1, k2 = inputs[i], inputs[j]
    either = k1 | k2
    keep = frozenset.union(output, *(inputs[r] for r in remaining - {i, j}))
    return either & keep, _flop_count(either, bool((k1 & k2) - keep), 2, sizes)


def _all_at_once_flops(inputs, remaining, output, sizes) -> int:
    labels = frozenset.union(*(inputs[r] for r in remaining))
    return _flop_count(labels, bool(labels - output), len(remaining), sizes)


def optimal(inputs, output, sizes, memory_limit=None):
    """Depth-first over every pair sequence, sieving on the best FLOPs found so far."""
    inputs = tuple(map(frozenset, inputs))
    output = frozenset(output)
    best = {"flops": float("inf"), "ssa": (tuple(range(len(inputs))),)}
    pair_cache: dict = {}
    size_cache: dict = {}

    def descend(path, remaining, tensors, flops):
        if len(remaining) == 1:
            best["flops"], best["ssa"] = flops, path
            return
        for i, j in itertools.combinations(remaining, 2):
            if i > j:
                i, j = j, i
            key = (tensors[i], tensors[j])
            if key not in pair_cache:
                pair_cache[key] = _pair_result(tensors, output, remaining, i, j, sizes)
            k12, step = pair_cache[key]
            total = flops + step
            if total >= best["flops"]:
                continue
            if memory_limit not in _UNLIMITED:
                if k12 not in size_cache:
                    size_cache[k12] = _size(k12, sizes)
                if size_cache[k12] > memory_limit:
                    total = flops + _all_at_once_flops(tensors, remaining, output, sizes)
                    if total < best["flops"]:
                        best["flops"], best["ssa"] = total, path + (tuple(remaining),)
                    continue
            descend(path + ((i, j),), (remaining - {i, j}) | {len(tensors)}, tensors + (k12,), total)

    descend((), set(range(len(inputs))), inputs, 0)
    return ssa_to_linear(best["ssa"])


def branch(inputs, output, sizes, memory_limit=None, nbranch=None, cutoff_flops_factor=4):
    """opt_einsum's BranchBound with minimize='flops' and the 'memory-removed' heuristic."""
    inputs = tuple(map(frozenset, inputs))
    output_given = output
    output = frozenset(output)
    size_cache = {labels: _size(labels, sizes) for labels in inputs}
    pair_cache: dict = {}
    best = {"flops": float("inf"), "size": float("inf")}
    progress = defaultdict(lambda: float("inf"))  # best FLOPs seen at each depth

    def descend(path, tensors, remaining, flops, largest):
        if len(remaining) == 1:
            best.update(size=largest, flops=flops, ssa=path)
            return

        def assess(k1, k2, i, j):
            if (k1, k2) not in pair_cache:
                pair_cache[k1, k2] = _pair_result(tensors, output, remaining, i, j, sizes)
            k12, step = pair_cache[k1, k2]
            if k12 not in size_cache:
                size_cache[k12] = _size(k12, sizes)
            size12 = size_cache[k12]
            total, new_largest = flops + step, max(largest, size12)
            if not (total, new_largest) < (best["flops"], best["size"]):
                return None
            if total < progress[len(tensors)]:
                progress[len(tensors)] = total
            elif total > cutoff_flops_factor * progress[len(tensors)]:
                return None
            if memory_limit not in _UNLIMITED and size12 > memory_limit:
                total = flops + _all_at_once_flops(tensors, remaining, output_given, sizes)
                if total < best["flops"]:
                    best["flops"], best["ssa"] = total, path + (tuple(remaining),)
                return None
            heuristic = size12 - size_cache[tensors[i]] - size_cache[tensors[j]]
            return heuristic, step, total, new_largest, (i, j), k12

        candidates: list = []
        for outer_products in (False, True):  # outer products only when nothing else is left
            for i, j in itertools.combinations(remaining, 2):
                if i > j:
                    i, j = j, i
                k1, k2 = tensors[i], tensors[j]
                if not outer_products and k1.isdisjoint(k2):
                    continue
                candidate = assess(k1, k2, i, j)
                if candidate:
                    heapq.heappush(candidates, candidate)
            if candidates:
                break
        explored = 0
        while (nbranch is None or explored < nbranch) and candidates:
            _, _, total, new_largest, (i, j), k12 = heapq.heappop(candidates)
            descend(path + ((i, j),), tensors + (k12,), (remaining - {i, j}) | {len(tensors)}, total, new_largest)
            explored += 1

    descend((), inputs, set(range(len(inputs))), 0, 0)
    return ssa_to_linear(best["ssa"])


def _greedy_ssa(inputs, output, sizes):
    """Hadamard products first, then the pair that most reduces memory, then outer products."""
    if len(inputs) == 1:
        return [(0,)]
    tensors = [frozenset(labels) for labels in inputs]
    # An index on every tensor cannot be summed before the last step: treat it as output.
    output = frozenset(output) | frozenset.intersection(*tensors)
    remaining: dict = {}  # labels -> ssa id
    ids = itertools.count(len(tensors))
    ssa_path: list = []
    for ssa_id, key in enumerate(tensors):
        if key in remaining:
            ssa_path.append((remaining[key], ssa_id))
            remaining[key] = next(ids)
        else:
            remaining[key] = ssa_id
    users = defaultdict(set)
    for key in remaining:
        for dim in key - output:
            users[dim].add(key)
    shared = {count: {dim for dim, keys in users.items() if len(keys) >= count} - output for count in (2, 3)}
    footprint = {key: _size(key, sizes) for key in remaining}

    def candidate(k1, k2):
        either, two = k1 | k2, k1 & k2
        k12 = (either & output) | (two & shared[3]) | ((either - two) & shared[2])
        cost = _size(k12, sizes) - footprint[k1] - footprint[k2]
        id1, id2 = remaining[k1], remaining[k2]
        if id1 > id2:
            k1, id1, k2, id2 = k2, id2, k1, id1
        return (cost, id2, id1), k1, k2, k12

    queue: list = []
    for dim, keys in users.items():
        ordered = sorted(keys, key=remaining.__getitem__)
        for position, k1 in enumerate(ordered[:-1]):
            heapq.heappush(queue, min(candidate(k1, k2) for k2 in ordered[position + 1 :]))
    while queue:
        _, k1, k2, k12 = heapq.heappop(queue)
        if k1 not in remaining or k2 not in remaining:
            continue  # stale: one side was contracted since this was queued
        ssa_id1, ssa_id2 = remaining.pop(k1), remaining.pop(k2)
        for dim in k1 - output:
            users[dim].remove(k1)
        for dim in k2 - output:
            users[dim].remove(k2)
        ssa_path.append((ssa_id1, ssa_id2))
        if k12 in remaining:
            ssa_path.append((remaining[k12], next(ids)))
        else:
            for dim in k12 - output:
                users[dim].add(k12)
        remaining[k12] = next(ids)
        for dim in k1 | k2 - output:
            count = len(users[dim])
            for threshold in (2, 3):
                (shared[threshold].add if count >= threshold else shared[threshold].discard)(dim)
        footprint[k12] = _size(k12, sizes)
        partners = {k2 for dim in k12 for k2 in users[dim]}
        partners.discard(k12)
        if partners:
            heapq.heappush(queue, min(candidate(k12, k2) for k2 in partners))
    final = [(_size(key & output, sizes), ssa_id, key) for key, ssa_id in remaining.items()]
    heapq.heapify(final)
    _, ssa_id1, k1 = heapq.heappop(final)
    while final:
        _, ssa_id2, k2 = heapq.heappop(final)
        ssa_path.append((min(ssa_id1, ssa_id2), max(ssa_id1, ssa_id2)))
        k12 = (k1 | k2) & output
        _, ssa_id1, k1 = heapq.heappushpop(final, (_size(k12, sizes), next(ids), k12))
    return ssa_path


def greedy(inputs, output, sizes, memory_limit=None):
    if memory_limit not in _UNLIMITED:
        return branch(inputs, output, sizes, memory_limit, nbranch=1)
    return ssa_to_linear(_greedy_ssa(inputs, output, sizes))


def _branch_with(nbranch):
    def search(inputs, output, sizes, memory_limit=None):
        return branch(inputs, output, sizes, memory_limit, nbranch=nbranch)

    return search


PATH_FUNCTIONS = {
    "optimal": optimal,
    "branch-all": _branch_with(None),
    "branch-2": _branch_with(2),
    "branch-1": _branch_with(1),
    "greedy": greedy,
    "eager": greedy,
    "opportunistic": greedy,
}


def auto_strategy(operand_count: int) -> str:
    """opt_einsum's 'auto' table: exhaustive while cheap, narrower branch-and-bound, then greedy."""
    if operand_count <= 4:
        return "optimal"
    if operand_count <= 6:
        return "branch-all"
    if operand_count <= 8:
        return "branch-2"
    if operand_count <= 14:
        return "branch-1"
    return "greedy"


def auto(inputs, output, sizes, memory_limit=None):
    return PATH_FUNCTIONS[auto_strategy(len(inputs))](inputs, output, sizes, memory_limit)


PATH_FUNCTIONS["auto"] = auto
