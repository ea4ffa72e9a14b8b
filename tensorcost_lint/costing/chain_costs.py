"""A chain of `@` as written against its best order: `a @ b @ c` runs as `(a @ b) @ c`, and a
matrix chain's best parenthesisation can be far cheaper. Costed here, beside the site's own cost, so
TCL403 only compares and words the result."""

from __future__ import annotations

from dataclasses import dataclass

from estimator import INDEX_LETTERS, EstimatorError
from estimator.planner import best_order, build_network, is_exact, order_cost, tree_path
from shape_annotations import ShapeError, evaluate_dim


@dataclass(frozen=True)
class ChainOrder:
    written_flops: int  # the tree Python evaluates
    best_flops: int
    best_tree: object  # the best order as a tree of leaf positions, each pair in chain order
    best_exact: bool = True  # False past the exact search's limit: the best a heuristic found


def chain_order(chain, sizes) -> ChainOrder | None:
    """None when the chain is not a chain of matrices (and end vectors) of known sizes."""
    count = len(chain.leaves)
    network = _chain_network(chain.leaves, sizes)
    if network is None:
        return None
    try:
        written = order_cost(network, tree_path(chain.tree, count))
        best = best_order(network)
    except EstimatorError:
        return None
    return ChainOrder(written.flops, best.flops, _path_tree(best.path, count), is_exact(best))




def _chain_network(leaves, sizes):
    """The chain as an einsum of bound sizes: each link [r, c] shares c with the next link's rows;
    a 1-D first or last operand is a vector. None when it is not such a chain or a size is unknown."""
    count = len(leaves)
    if count + 1 > len(INDEX_LETTERS):
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
            terms.append(INDEX_LETTERS[index] + INDEX_LETTERS[index + 1])
        else:
            terms.append(INDEX_LETTERS[index + 1] if index == 0 else INDEX_LETTERS[index])
        shapes.append(values)
    output = (INDEX_LETTERS[0] if len(shapes[0]) == 2 else "") + (INDEX_LETTERS[count] if len(shapes[-1]) == 2 else "")
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
