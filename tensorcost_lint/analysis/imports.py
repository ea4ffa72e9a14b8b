"""Our own import-alias table: local names → canonical dotted names.

LibCST's QualifiedNameProvider costs several times the parse on real model code and finds no more
calls; a table built from the file's import statements resolves every form users write
(`import torch as th`, `from torch import einsum`, `import torch.nn.functional as F`,
`from jax import numpy as jnp`, `import numpy as np`, `from einops import rearrange`).
"""

from __future__ import annotations

import ast
from functools import lru_cache

import libcst as cst

# Modules whose re-exports we canonicalise: `jax.numpy` is reached as `jnp`, `torch.functional.F`...
_CANONICAL_MODULES = {
    "torch.nn.functional": "torch.nn.functional",
    "torch.functional": "torch",
    "numpy": "numpy",
    "jax.numpy": "jax.numpy",
    "jax.lax": "jax.lax",
    "jax.nn": "jax.nn",
    "opt_einsum": "opt_einsum",
    "einops": "einops",
}


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts = []
    while type(node) is cst.Attribute:  # (LibCST's ABC isinstance is slow, and this runs per call)
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


class ImportTable:
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        # name -> the dotted name a star import binds it to (`from .activations import *` of a file
        # that has `from torch import nn`), or None; set by a whole-model tree, asked once a name
        self.star_aliases = None
        self._asked: set = set()

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """Canonical dotted name of an expression like `F.softmax` or `th.einsum`, if imported."""
        head = node
        while type(head) is cst.Attribute:
            head = head.value
        if type(head) is not cst.Name or head.value not in self.aliases and not self._star(head.value):
            return None  # `self.proj`, a local name: no import (most calls; no dotted text built)
        return self.resolve_text(dotted_name(node))

    def _star(self, name: str) -> bool:
        if self.star_aliases is None or name in self._asked:
            return False
        self._asked.add(name)
        found = self.star_aliases(name)
        if found is not None:
            self.aliases[name] = found
        return found is not None

    def resolve_text(self, name: str) -> str | None:
        head, _, rest = name.partition(".")
        base = self.aliases.get(head)
        if base is None and self._star(head):
            base = self.aliases.get(head)
        if base is None:
            return None
        return _canonical(f"{base}.{rest}" if rest else base)


@lru_cache(maxsize=4096)
def _canonical(full: str) -> str:
    """`full` with its module spelled canonically (a name is resolved on every evaluation of it: a
    model of 2**20 modules asked ~150,000 times for a few dozen names)."""
    for module, canonical in _CANONICAL_MODULES.items():
        if full == module or full.startswith(module + "."):
            return canonical + full[len(module):]
    return full


def ast_dotted_name(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def import_table_from_ast(tree) -> ImportTable:
    """The same table from the stdlib tree: imports in any block of the file (module level, under
    `if TYPE_CHECKING:`, in try/except, inside functions), visiting statements only."""
    table = ImportTable()
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    table.aliases[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    table.aliases[head] = head
        elif isinstance(node, ast.ImportFrom):
            if not node.level and node.module:
                for alias in node.names:
                    if alias.name != "*":
                        table.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        else:
            for block in ("body", "orelse", "finalbody", "handlers", "cases"):
                children = getattr(node, block, None)
                if isinstance(children, list):
                    pending.extend(children)
    return table
