"""A call site's identity that survives edits elsewhere in the file (Contract 8).

(config-relative posix path, enclosing qualified name, normalised expression, occurrence index): no
line numbers, so inserting lines above a site moves nothing. The qualified name is Python's
`__qualname__` spelling (`GPT.forward`, `make.<locals>.inner`, `<module>`), found from the stdlib
`ast` by position; the expression is `ast.unparse` of the site's text, so re-wrapping or
re-spacing it changes nothing either. Equal (path, qualname, expression) triples are numbered in
source order.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

MODULE = "<module>"


@dataclass(frozen=True, order=True)
class SiteKey:
    path: str
    qualname: str
    expression: str
    occurrence: int

    def label(self) -> str:
        suffix = f" #{self.occurrence + 1}" if self.occurrence else ""
        return f"{self.path}::{self.qualname} `{self.expression}`{suffix}"


def relative_path(path: str, root: str | None) -> str:
    """`path` relative to the config file's directory (the working directory without one), posix."""
    base = root if root is not None else os.getcwd()
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(base))
    return relative.replace(os.sep, "/")


def normalise_expression(text: str) -> str:
    try:
        return ast.unparse(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return " ".join(text.split())


class Scopes:
    """The function and class definitions of one file, innermost found by line."""

    def __init__(self, text: str) -> None:
        self._scopes: list[tuple[int, int, int, str]] = []  # (first line, last line, depth, qualname)
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        self._walk(tree.body, "", 0)

    def _walk(self, body, prefix: str, depth: int) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = prefix + node.name
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                self._scopes.append((first, node.end_lineno or node.lineno, depth, qualname))
                inner = qualname + (".<locals>." if not isinstance(node, ast.ClassDef) else ".")
                self._walk(node.body, inner, depth + 1)
            else:  # definitions nested in if/for/with/try bodies keep the enclosing prefix
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    nested = getattr(node, field, None)
                    if isinstance(nested, list):
                        self._walk([n for n in nested if isinstance(n, ast.AST)], prefix, depth)

    def qualname_at(self, line: int) -> str:
        best = None
        for first, last, depth, qualname in self._scopes:
            if first <= line <= last and (best is None or depth > best[0]):
                best = (depth, qualname)
        return best[1] if best else MODULE


def keyed(path: str, scopes: Scopes, sites) -> list:
    """[(SiteKey, item)] for `sites`, an iterable of (line, column, expression text, item)."""
    counts: dict = {}
    keyed_sites = []
    for line, column, expression, item in sorted(sites, key=lambda s: (s[0], s[1])):
        base = (path, scopes.qualname_at(line), normalise_expression(expression or ""))
        occurrence = counts.get(base, 0)
        counts[base] = occurrence + 1
        keyed_sites.append((SiteKey(*base, occurrence), item))
    return keyed_sites
