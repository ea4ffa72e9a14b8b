"""Contraction orders and their exact cost: FLOPs, intermediates and live elements per step.

A path follows opt_einsum's convention: each step names positions in the *current* operand list,
those operands are removed and the result is appended last. Costs follow opt_einsum's `flop_count`
(and so numpy's einsum_path): a step over index set I costs prod(I) x (max(1, terms-1) + inner),
where inner is 1 when the step sums an index away; a pairwise step is then 2 FLOPs per fused
multiply-add when it sums, 1 per output element when it does not.

Live elements count intermediates only: the caller holds the inputs for the whole call whatever
the order, so they would shift every order by the same amount and hide the difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..counting import checked_product, checked_sum
from ..errors import EinsumError
from .network import Network

Path = tuple[tuple[int, ...], ...]
Tree = "int | tuple[Tree, Tree]"


@dataclass(frozen=True, slots=True)
class ContractionStep:
    """One step of an order. `live_elements`: elements of every intermediate alive while the step
    runs — earlier results not yet consumed (its own operands included) plus its output."""

    operands: tuple[int, ...]  # positions in the current operand list, ascending
    subscripts: str
    output_shape: tuple[int, ...]
    flops: int
    intermediate_elements: int  # elements of this step's output
    live_elements: int


@dataclass(frozen=True, slots=True)
class ContractionOrder:
    """A whole path with its totals. `largest_intermediate` counts the final output too, as
    opt_einsum's `largest_intermediate` does."""

    path: Path
    steps: tuple[ContractionStep, ...]
    flops: int
    largest_intermediate: int
    peak_live_elements: int
    strategy: str


def normalize_path(path: object, operand_count: int) -> Path:
    """Validate a user- or search-supplied path; positions come back sorted ascending."""
    if isinstance(path, (str, bytes)) or not isinstance(path, Sequence) or not path:
        raise EinsumError("path", "expected a non-empty sequence of steps like [(1, 2), (0, 1)]")
    alive = operand_count
    steps = []
    for number, step in enumerate(path):
        if isinstance(step, (str, bytes)) or not isinstance(step, Sequence) or not step:
            raise EinsumError("path", f"step {number}: expected a tuple of operand positions, got {step!r}")
        for position in step:
            if type(position) is not int:
                raise EinsumError("path", f"step {number}: positions must be ints, got {position!r}")
            if not 0 <= position < alive:
                raise EinsumError(
                    "path", f"step {number}: position {position} is out of range for {alive} operands"
                )
        if len(set(step)) != len(step):
            raise EinsumError("path", f"step {number}: an operand is named twice in {tuple(step)}")
        steps.append(tuple(sorted(step)))
        alive -= len(step) - 1
    if alive != 1:
        raise EinsumError("path", f"the path leaves {alive} operands; it must contract down to one")
    return tuple(steps)


def _ordered_union(terms: Sequence[str]) -> str:
    seen: list[str] = []
    for term in terms:
        seen.extend(label for label in term if label not in seen)
    return "".join(seen)


def order_cost(network: Network, path: Sequence[Sequence[int]], strategy: str = "explicit") -> ContractionOrder:
    """The exact cost of `path` on `network`; CountOverflow when any count passes 2**63-1."""
    steps_in = normalize_path(path, network.operand_count)
    size = network.size_dict()
    output = set(network.output)
    current: list[tuple[str, int | None]] = [(term, None) for term in network.inputs]  # (labels, elements if intermediate)
    alive = 0
    steps = []
    for number, positions in enumerate(steps_in):
        taken = [current[p] for p in positions]
        rest = [item for index, item in enumerate(current) if index not in positions]
        contracted = _ordered_union([labels for labels, _ in taken])
        keep = output.union(*(labels for labels, _ in rest))
        if number == len(steps_in) - 1:
            result = network.output
        else:
            # intermediates keep their labels in order of first appearance (tensordot's order)
            result = "".join(label for label in contracted if label in keep)
        summed = len(result) < len(contracted)
        factor = max(1, len(positions) - 1) + (1 if summed else 0)
        flops = checked_product([*(size[label] for label in contracted), factor], "flops")
        elements = checked_product((size[label] for label in result), "intermediate_elements")
        live = checked_sum((alive, elements), "live_elements")
        alive = live - sum(held for _, held in taken if held is not None)
        steps.append(
            ContractionStep(
                operands=positions,
                subscripts=",".join(labels for labels, _ in taken) + "->" + result,
                output_shape=tuple(size[label] for label in result),
                flops=flops,
                intermediate_elements=elements,
                live_elements=live,
            )
        )
        current = rest + [(result, elements)]
    return ContractionOrder(
        path=steps_in,
        steps=tuple(steps),
        flops=checked_sum((step.flops for step in steps), "flops"),
        largest_intermediate=max(step.intermediate_elements for step in steps),
        peak_live_elements=max(step.live_elements for step in steps),
        strategy=strategy,
    )


def naive_flops(network: Network) -> int:
    """numpy's single loop over every index, counted as numpy and opt_einsum count it: any index
    shared by two operands makes it an 'inner product' (+1 per point), even a Hadamard one."""
    all_labels = _ordered_union(network.inputs)
    inner = sum(len(set(term)) for term in network.inputs) > len(all_labels)
    factor = max(1, network.operand_count - 1) + (1 if inner else 0)
    size = network.size_dict()
    return checked_product([*(size[label] for label in all_labels), factor], "flops")


def single_loop_order(network: Network, strategy: str = "single-loop") -> ContractionOrder:
    """np.einsum's default (optimize=False): one nested loop over all indices, no intermediates."""
    flops = naive_flops(network)
    elements = network.elements(network.output)
    step = ContractionStep(
        operands=tuple(range(network.operand_count)),
        subscripts=network.canonical,
        output_shape=tuple(dict(network.sizes)[label] for label in network.output),
        flops=flops,
        intermediate_elements=elements,
        live_elements=elements,
    )
    return ContractionOrder((step.operands,), (step,), flops, elements, elements, strategy)


def path_clusters(path: Path, operand_count: int) -> frozenset[frozenset[int]]:
    """The order's tree as the set of operand groups its steps build: two paths that differ only
    in when independent steps run build the same groups, cost the same FLOPs and are one order."""
    current = [frozenset((index,)) for index in range(operand_count)]
    clusters = []
    for positions in path:
        merged = frozenset().union(*(current[p] for p in positions))
        current = [group for index, group in enumerate(current) if index not in positions] + [merged]
        clusters.append(merged)
    return frozenset(clusters)


def tree_path(tree, operand_count: int) -> Path:
    """The canonical path of a binary tree (ints are operands, pairs are steps): the subtree
    holding the smaller operand first, then the other, then their merge."""
    current: list[int] = list(range(operand_count))
    path: list[tuple[int, int]] = []

    def emit(node) -> int:
        if type(node) is int:
            return node
        left, right = emit(node[0]), emit(node[1])
        i, j = sorted((current.index(left), current.index(right)))
        del current[j], current[i]
        token = -1 - len(path)  # negative ids never collide with operand ids
        current.append(token)
        path.append((i, j))
        return token

    emit(tree)
    return tuple(path)


def left_to_right_path(operand_count: int) -> Path:
    """((A·B)·C)·D: after the first step the running result sits last, the next operand first."""
    if operand_count == 1:
        return ((0,),)
    return ((0, 1),) + tuple((0, remaining - 1) for remaining in range(operand_count - 1, 1, -1))
