"""Hypothesis strategies for random tensor networks, and helpers to hand them to numpy/opt_einsum."""

from __future__ import annotations

from hypothesis import strategies as st

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@st.composite
def networks(draw, min_operands: int = 2, max_operands: int = 6, max_size: int = 8, max_output: int = 3):
    """(subscripts, shapes) of a connected network: a spanning tree of shared indices joins every
    operand, then extra indices land on one to three operands (one: summed out of that operand)."""
    n = draw(st.integers(min_operands, max_operands))
    extra = draw(st.integers(0, n + 2))
    labels = LETTERS[: n - 1 + extra]
    terms: list[list[str]] = [[] for _ in range(n)]
    for operand in range(1, n):
        partner = draw(st.integers(0, operand - 1))
        terms[operand].append(labels[operand - 1])
        terms[partner].append(labels[operand - 1])
    for label in labels[n - 1 :]:
        for operand in draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True)):
            terms[operand].append(label)
    terms = [list(draw(st.permutations(term))) for term in terms]
    output = draw(st.lists(st.sampled_from(labels), unique=True, max_size=max_output)) if labels else []
    sizes = {label: draw(st.integers(1, max_size)) for label in labels}
    subscripts = ",".join("".join(term) for term in terms) + "->" + "".join(output)
    return subscripts, [[sizes[label] for label in term] for term in terms]


@st.composite
def paths(draw, operand_count: int):
    """A random pairwise path in opt_einsum's convention."""
    path = []
    for alive in range(operand_count, 1, -1):
        i = draw(st.integers(0, alive - 2))
        j = draw(st.integers(i + 1, alive - 1))
        path.append((i, j))
    return path


def shaped(shapes):
    """Zero-memory arrays of these shapes: numpy's einsum_path reads only `.shape`."""
    import numpy as np

    return [np.broadcast_to(np.empty((), dtype=np.float32), tuple(shape)) for shape in shapes]
