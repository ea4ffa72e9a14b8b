"""LibCST, the two costly ways the analysis uses it made cheaper, with the same trees and the same order.

- `parse_module`: LibCST checks each node it builds (`CSTNode.__post_init__` runs `_validate`), a
  fifth of a parse. The checks guard trees built by hand; the text parsed here has passed CPython's
  own parser first (flake8's tree, or `ast.parse` in `analyse_source`), and on that text the trees
  are equal with and without the checks (tests/analysis/test_cst_parse.py compares them). The
  checks are off only while this module parses, under a lock, so a node built by hand meanwhile in
  another thread (the language server) may skip them: it is one the analysis builds, never invalid.
- `child_nodes`: `node.children` re-creates the node through its visitor to list its children in
  source order. The order of a node's fields in that list is fixed by its class (LibCST visits them
  in straight-line code), so it is learnt once per class and set of non-empty fields from `children`
  itself, checked against it, and reused; a class whose order cannot be told apart keeps `children`.
"""

from __future__ import annotations

import dataclasses
import threading

import libcst as cst
from .identifiers import python_identifiers
from libcst._nodes.base import CSTNode  # the one class whose hook is switched off while parsing

_LOCK = threading.Lock()
_DEPTH = 0
_CHECKED_INIT = CSTNode.__post_init__


def _unchecked_init(self) -> None:
    return None


def _checks_removable() -> bool:
    """Only where no node class has a `__post_init__` of its own (else it would run as before)."""
    pending, seen = [CSTNode], set()
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                if "__post_init__" in vars(sub):
                    return False
                pending.append(sub)
    return True


_REMOVABLE = _checks_removable()


def parse_module(text: str) -> cst.Module:
    """`libcst.parse_module(text)` for text CPython has already parsed, its identifiers folded as
    Python folds them (identifiers.py)."""
    global _DEPTH
    text = python_identifiers(text)
    if not _REMOVABLE:
        return cst.parse_module(text)
    with _LOCK:
        _DEPTH += 1
        CSTNode.__post_init__ = _unchecked_init
    try:
        return cst.parse_module(text)
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                CSTNode.__post_init__ = _CHECKED_INIT


_FIELDS: dict = {}  # class -> names of its dataclass fields
_ORDER: dict = {}  # (class, names of the fields holding nodes) -> those names in source order, or None


def _holds_nodes(value) -> bool:
    if isinstance(value, CSTNode):
        return True
    return isinstance(value, (tuple, list)) and bool(value) and isinstance(value[0], CSTNode)


def _flatten(node, order) -> list:
    children = []
    for name in order:
        value = getattr(node, name)
        if isinstance(value, CSTNode):
            children.append(value)
        else:
            children.extend(value)
    return children


def _learn(node, present: tuple, children: list):
    """The fields of `present` in the order `children` lists their nodes, or None when that order
    does not give back `children` exactly (a node shared by two fields, or a class that visits a
    field conditionally)."""
    first = {}
    for index, child in enumerate(children):
        first.setdefault(id(child), index)
    positions = []
    for name in present:
        value = getattr(node, name)
        head = value if isinstance(value, CSTNode) else value[0]
        if id(head) not in first:
            return None
        positions.append((first[id(head)], name))
    order = tuple(name for _, name in sorted(positions))
    flattened = _flatten(node, order)
    if len(flattened) != len(children) or any(a is not b for a, b in zip(flattened, children)):
        return None
    return order


def child_nodes(node) -> list:
    """`node.children`: the same nodes, in the same order."""
    cls = type(node)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    present = tuple(name for name in names if _holds_nodes(getattr(node, name)))
    key = (cls, present)
    if key in _ORDER:
        order = _ORDER[key]
        return _flatten(node, order) if order is not None else list(node.children)
    children = list(node.children)
    _ORDER[key] = _learn(node, present, children)
    return children
