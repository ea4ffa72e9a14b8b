"""The stdlib tree of a file, long runs of one-line statements parsed in pieces.

`ast.parse` holds the parser's own tree and the Python objects made from it at once, ~200 bytes a
source byte at its peak: a forward of 100,000 `h = self.lin(h)` lines (2.4 MB) peaks at 507 MB, of
which the tree it returns is 250 MB. Here a run of at least MIN_RUN consecutive lines, each one
complete simple statement at one indentation, is left out of the file's parse (its first line
becomes `pass`, the others blank lines) and parsed apart, PIECE lines at a time, where it stands (the
same line numbers and columns); its statements then replace the `pass`. The peak is the returned
tree plus one piece's parser memory.

Why the tree is the one `ast.parse` gives: a run's lines hold no string, comment, backslash,
unbalanced bracket, decorator, compound keyword or trailing colon, so each is a whole logical line
and the run's statements are consecutive statements of one block, unless the run lies inside a
string or brackets opened before it. There the `pass` is a syntax error (`pass` is never part of an
expression) or lies inside a string, where no `pass` statement is found; either way, as on any
syntax error, the whole text is parsed as usual (its SyntaxError is ast.parse's own).
"""

from __future__ import annotations

import ast
import re

from ..safe_io.source_lines import source_lines

MIN_RUN = 2000  # shorter runs are cheaper to parse with the file (real code has few this long)
PIECE = 5000  # lines parsed at once: the parser's memory is one piece's
_PLACEHOLDER = "pass"
# A line that is one whole simple statement: no string, comment or continuation (nothing ends or
# opens across lines), no decorator, no trailing colon (a block header), no compound keyword (a
# header with its body on the line: `if x: y`); brackets are checked apart (balanced on the line).
_SIMPLE_LINE = re.compile(
    r"(?P<indent>[ \t]*)(?!(?:if|elif|else|for|while|with|def|class|try|except|finally|async|match|case)\b)"
    r"[^\s@'\"#\\](?:[^'\"#\\\r\n]*[^\s:'\"#\\])?[ \t\f]*(?:\r\n|\r|\n)?")
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")


def parse_source(text: str, filename: str = "<unknown>", *, min_run: int = MIN_RUN,
                 piece: int = PIECE) -> ast.Module:
    """`ast.parse(text, filename)`, with the same result and errors, at a lower peak for long runs."""
    if text.count("\n") < min_run:
        return ast.parse(text, filename)
    lines = source_lines(text, keepends=True)  # as Python numbers them (not str.splitlines)
    runs = _runs(lines, min_run)
    if not runs:
        return ast.parse(text, filename)
    try:
        tree = _parse_with_runs(lines, runs, filename, piece)
    except (SyntaxError, ValueError):
        tree = None
    return tree if tree is not None else ast.parse(text, filename)


def _balanced(line: str) -> bool:
    if not (_OPEN.intersection(line) or _CLOSE.intersection(line)):
        return True
    depth = 0
    for char in line:
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _runs(lines: list[str], min_run: int) -> list[tuple[int, int, str]]:
    """[(first, last, indentation)] of the runs, 0-based line indexes, in file order."""
    runs, start, indent = [], None, None
    for index, line in enumerate(lines):
        match = _SIMPLE_LINE.fullmatch(line)
        ok = match is not None and _balanced(line)
        if ok and start is not None and match.group("indent") == indent:
            continue
        if start is not None and index - start >= min_run:
            runs.append((start, index - 1, indent))
        start, indent = (index, match.group("indent")) if ok else (None, None)
    if start is not None and len(lines) - start >= min_run:
        runs.append((start, len(lines) - 1, indent))
    return runs


def _parse_with_runs(lines: list[str], runs, filename: str, piece: int) -> ast.Module | None:
    outside = list(lines)
    for first, last, indent in runs:
        ending = lines[first][len(lines[first].rstrip("\r\n")):]
        outside[first] = indent + _PLACEHOLDER + ending
        for index in range(first + 1, last + 1):
            outside[index] = lines[index][len(lines[index].rstrip("\r\n")):] or "\n"
    tree = ast.parse("".join(outside), filename)
    del outside
    places = {(first + 1, len(indent.encode("utf-8"))): (first, last, indent) for first, last, indent in runs}
    found: dict = {}
    _find(tree, places, [], found)
    if len(found) != len(places):
        return None  # a run inside a string: its `pass` is text, not a statement
    for key in sorted(found, reverse=True):  # later places first: earlier indexes stay valid
        statements, index, ancestors = found[key]
        placeholder = statements[index]
        body = _run_statements(lines, *places[key], filename, piece)
        if body is None:
            return None
        end = (placeholder.end_lineno, placeholder.end_col_offset)
        for node in ancestors:  # a block ending with the run ends where the run does
            if (node.end_lineno, node.end_col_offset) == end:
                node.end_lineno, node.end_col_offset = body[-1].end_lineno, body[-1].end_col_offset
        statements[index:index + 1] = body
    return tree


def _find(node, places: dict, ancestors: list, found: dict) -> None:
    """Each placeholder `pass` among the statements under `node`: (its list, index, ancestors)."""
    for _, value in ast.iter_fields(node):
        if type(value) is not list:
            continue
        for index, item in enumerate(value):
            if type(item) is ast.Pass and (item.lineno, item.col_offset) in places:
                found[(item.lineno, item.col_offset)] = (value, index, list(ancestors))
            elif isinstance(item, (ast.stmt, ast.excepthandler, ast.match_case)):
                ancestors.append(item)
                _find(item, places, ancestors, found)
                ancestors.pop()


def _run_statements(lines: list[str], first: int, last: int, indent: str, filename: str,
                    piece: int) -> list | None:
    """The statements of lines[first..last], parsed where they stand: blank lines before them, and
    an indented run under an `if 1:` on the line above its first."""
    statements = []
    for start in range(first, last + 1, piece):
        chunk = "".join(lines[start:min(start + piece, last + 1)])
        if indent:
            module = ast.parse("\n" * (start - 1) + "if 1:\n" + chunk, filename)
            if len(module.body) != 1 or type(module.body[0]) is not ast.If:
                return None
            statements.extend(module.body[0].body)
        else:
            statements.extend(ast.parse("\n" * start + chunk, filename).body)
    return statements
