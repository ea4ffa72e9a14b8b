"""Positions and source text for the trees ast_front.py builds: what LibCST's PositionProvider and
`code_for_node` answer, read from the stdlib tree's positions and the file's text.

- A position excludes the node's own parentheses (as LibCST's does); the stdlib tree's does too,
  except for a parenthesized tuple and a generator expression, which are trimmed.
- `node_code` includes them (as `code_for_node` does): matched `(`…`)` pairs around the node with
  only spaces, line breaks and comments between, less the pair of a call with that one argument.
- The stdlib tree counts columns in UTF-8 bytes; LibCST (and our findings) in characters.
"""

from __future__ import annotations

import ast
import io
import tokenize
from bisect import bisect_right
from dataclasses import dataclass, field

import libcst as cst

from .context import UnitContext


class Unsupported(Exception):
    """A construct the ast front end does not build: the unit goes to LibCST's parser instead."""


_SPACE = " \t\f"
_QUOTES = ("'", '"')


class SourceText:
    """One file's text, with character offsets for the stdlib tree's (line, byte column) pairs."""

    def __init__(self, text: str, lines: list[str]) -> None:
        self.text = text
        self.lines = lines  # with their line breaks, as Python numbers them
        starts, offset = [], 0
        for line in lines:
            starts.append(offset)
            offset += len(line)
        self.starts = starts
        self._comments: dict | None = None  # line -> column of its comment, from tokenize, when needed

    def offset(self, line: int, column: int) -> int:
        """Character offset in the text of a stdlib (1-based line, UTF-8 byte column)."""
        text = self.lines[line - 1]
        if not text.isascii():
            column = len(text.encode("utf-8")[:column].decode("utf-8", "replace"))
        return self.starts[line - 1] + column

    def offsets(self, node) -> tuple[int, int]:
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def segment(self, node) -> str:
        start, end = self.offsets(node)
        return self.text[start:end]

    def line_column(self, offset: int) -> tuple[int, int]:
        """(1-based line, 0-based character column) of a character offset."""
        index = bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index]

    def starts_line(self, statement) -> bool:
        """The statement is the first on its line (else it follows a `;`)."""
        start = self.offset(statement.lineno, statement.col_offset)
        before = self.text[self.starts[statement.lineno - 1]:start]
        if before.strip(_SPACE):
            return False
        if statement.lineno > 1 and self.lines[statement.lineno - 2].rstrip("\r\n").endswith("\\"):
            raise Unsupported("a line continued by a backslash")
        return True

    def indentation(self, line: int) -> str:
        text = self.lines[line - 1]
        return text[:len(text) - len(text.lstrip(_SPACE))]

    def dedented(self, start: int, end: int, indent: str) -> str:
        """text[start:end] as LibCST prints a node alone: a line inside brackets that begins with the
        statement's indentation loses it (LibCST keeps it as an indent token of the enclosing
        blocks); lines continued by a backslash or inside a string keep theirs."""
        text = self.text[start:end]
        if not indent or "\n" not in text:
            return text
        inside_strings = self._string_lines(start, end) if ("'" in text or '"' in text) else ()
        lines = text.split("\n")
        for index in range(1, len(lines)):
            previous = lines[index - 1].rstrip("\r")
            if lines[index].startswith(indent) and not previous.endswith("\\") and index not in inside_strings:
                lines[index] = lines[index][len(indent):]
        return "\n".join(lines)

    def _string_lines(self, start: int, end: int) -> set:
        """Indexes of the lines of text[start:end] that begin inside a string token."""
        inside = set()
        try:
            for token in tokenize.generate_tokens(io.StringIO("(" + self.text[start:end] + ")").readline):
                if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                    inside.update(range(token.start[0], token.end[0]))  # 0-based: lines after the first
        except (tokenize.TokenError, SyntaxError):
            pass
        return inside

    def is_elif(self, node: ast.If) -> bool:
        return self.text.startswith("elif", self.offset(node.lineno, node.col_offset))

    def trailing_comment(self, statement):
        """(start, end, text) of the comment after the last statement of a line, None without one,
        False when something else follows it (a backslash continuation)."""
        end = self.offset(statement.end_lineno, statement.end_col_offset)
        line_end = self.starts[statement.end_lineno - 1] + len(self.lines[statement.end_lineno - 1].rstrip("\r\n"))
        index = end
        while index < line_end and self.text[index] in _SPACE:
            index += 1
        if index < line_end and self.text[index] == ";":
            index += 1
            while index < line_end and self.text[index] in _SPACE:
                index += 1
        if index == line_end:
            return None
        if self.text[index] != "#":
            return False
        return index, line_end, self.text[index:line_end]

    def parenthesized(self, node) -> bool:
        """A tuple written inside its own parentheses: `(a, b)`, not `a, b` nor `(a), (b)`."""
        return self.parenthesized_span(*self.offsets(node))

    def parenthesized_span(self, start: int, end: int) -> bool:
        if self.text[start] != "(" or self.text[end - 1] != ")":
            return False
        return self._closing(start, end) == end - 1

    def _closing(self, start: int, end: int) -> int | None:
        """The offset of the `)` that closes the `(` at `start`, tokenizing text[start:end]."""
        depth = 0
        try:
            for token in tokenize.generate_tokens(io.StringIO(self.text[start:end]).readline):
                if token.type == tokenize.OP and token.string in "([{":
                    depth += 1
                elif token.type == tokenize.OP and token.string in ")]}":
                    depth -= 1
                    if depth == 0:
                        return self._fragment_offset(start, 0, *token.start)
        except (tokenize.TokenError, SyntaxError):
            raise Unsupported("parentheses") from None
        return None

    def _fragment_offset(self, start: int, shift: int, line: int, column: int) -> int:
        """The text offset of tokenize's (line, column) in a fragment that begins at `start` with
        `shift` characters prepended to its first line."""
        if line == 1:
            return start + column - shift
        first, _ = self.line_column(start)
        return self.starts[first + line - 2] + column

    def string_tokens(self, node):
        """[((start, end), token)] of the string literals an implicitly concatenated string is
        written as (the stdlib tree holds them as one constant)."""
        start, end = self.offsets(node)
        fragment = "(" + self.text[start:end] + ")"  # inside parentheses line breaks are not statements
        pieces = []
        try:
            for token in tokenize.generate_tokens(io.StringIO(fragment).readline):
                if token.type == tokenize.STRING:
                    first = self._fragment_offset(start, 1, *token.start)
                    pieces.append(((first, first + len(token.string)), token.string))
        except (tokenize.TokenError, SyntaxError):
            return None
        return pieces or None

    # -- parentheses around a node ------------------------------------------------------------------
    def next_significant(self, offset: int) -> int:
        """The first offset at or after `offset` that is not a space, line break or comment."""
        text, size = self.text, len(self.text)
        while offset < size:
            char = text[offset]
            if char in " \t\f\r\n":
                offset += 1
            elif char == "\\" and text[offset + 1: offset + 2] in ("\n", "\r"):
                offset += 2
            elif char == "#":
                newline = text.find("\n", offset)
                offset = size if newline < 0 else newline
            else:
                return offset
        return offset

    def previous_significant(self, offset: int) -> int:
        """The last offset before `offset` that is not a space, line break, continuation or comment."""
        text = self.text
        offset -= 1
        while offset >= 0:
            char = text[offset]
            if char in _SPACE:
                offset -= 1
            elif char in "\r\n":
                line, _ = self.line_column(offset)
                offset = self.starts[line - 1] + self._code_end(line) - 1
                if offset >= 0 and text[offset] == "\\":
                    offset -= 1  # a backslash continuation
            else:
                return offset
        return -1

    def _code_end(self, line: int) -> int:
        """Where the code of a line ends: at its comment, else at its line break."""
        text = self.lines[line - 1]
        if "#" not in text:
            return len(text.rstrip("\r\n"))
        if not any(quote in text for quote in _QUOTES):
            return text.index("#")
        if self._comments is None:
            self._comments = {}
            try:
                for token in tokenize.generate_tokens(io.StringIO(self.text).readline):
                    if token.type == tokenize.COMMENT:
                        self._comments[token.start[0]] = token.start[1]
            except (tokenize.TokenError, SyntaxError):
                pass
        return self._comments.get(line, len(text.rstrip("\r\n")))


# The child fields of each node the front end builds, in LibCST's source order: a walk for call
# sites descends these (tests/analysis/test_ast_front.py checks them against LibCST's `children`).
CHILD_FIELDS = {
    cst.Name: (), cst.Integer: (), cst.Float: (), cst.Imaginary: (), cst.SimpleString: (), cst.Ellipsis: (),
    cst.Attribute: ("value", "attr"), cst.Call: ("func", "args"), cst.Arg: ("keyword", "value"),
    cst.BinaryOperation: ("left", "operator", "right"), cst.UnaryOperation: ("operator", "expression"),
    cst.BooleanOperation: ("left", "operator", "right"), cst.Comparison: ("left", "comparisons"),
    cst.ComparisonTarget: ("operator", "comparator"), cst.IfExp: ("body", "test", "orelse"),
    cst.NamedExpr: ("target", "value"), cst.Await: ("expression",), cst.Yield: ("value",), cst.From: ("item",),
    cst.Lambda: ("params",  "body"),
    cst.Parameters: ("posonly_params", "posonly_ind", "params", "star_arg", "kwonly_params", "star_kwarg"),
    cst.Param: ("name", "annotation", "default"), cst.Annotation: ("annotation",),
    cst.Tuple: ("elements",), cst.List: ("elements",), cst.Set: ("elements",), cst.Element: ("value",),
    cst.StarredElement: ("value",), cst.Dict: ("elements",), cst.DictElement: ("key", "value"),
    cst.StarredDictElement: ("value",), cst.ListComp: ("elt", "for_in"), cst.SetComp: ("elt", "for_in"),
    cst.GeneratorExp: ("elt", "for_in"), cst.DictComp: ("key", "value", "for_in"),
    cst.CompFor: ("target", "iter", "ifs", "inner_for_in"), cst.CompIf: ("test",),
    cst.Subscript: ("value", "slice"), cst.SubscriptElement: ("slice",), cst.Index: ("value",),
    cst.Slice: ("lower", "upper", "step"), cst.FormattedString: ("parts",), cst.FormattedStringText: (),
    cst.FormattedStringExpression: ("expression", "format_spec"), cst.ConcatenatedString: ("left", "right"),
    cst.Raise: ("exc", "cause"), cst.Assert: ("test", "msg"), cst.Del: ("target",),
    cst.Global: ("names",), cst.Nonlocal: ("names",), cst.NameItem: ("name",), cst.Import: ("names",),
    cst.ImportFrom: ("relative", "module", "names"), cst.ImportAlias: ("name", "asname"), cst.AsName: ("name",),
    cst.Pass: (), cst.Break: (), cst.Continue: (), cst.Expr: ("value",), cst.Return: ("value",),
    cst.Assign: ("targets", "value"), cst.AssignTarget: ("target",), cst.AnnAssign: ("target", "annotation", "value"),
    cst.AugAssign: ("target", "operator", "value"), cst.Decorator: ("decorator",),
}


PLACE_FIELD = 1 << 32  # each field of a packed place (ast_expressions._Places) is under this
_PLACE_MASK = PLACE_FIELD - 1
_PLACE_KINDS = (None, ast.Tuple, ast.GeneratorExp, None)


def packed_span(start: int, end: int):
    """[start, end) as one int (a statement line's span: ~85 bytes less than a tuple of two), or
    the tuple where an offset is past PLACE_FIELD."""
    return start << 32 | end if start < PLACE_FIELD and end < PLACE_FIELD else (start, end)


def unpack_place(place: int) -> tuple:
    """(line, column, end line, end column, ast.Tuple / ast.GeneratorExp / None) of a packed place."""
    kind = _PLACE_KINDS[place & 3]
    place >>= 2
    end_column = place & _PLACE_MASK
    place >>= 32
    column = place & _PLACE_MASK
    place >>= 32
    line = place >> 32
    return line, column, line + (place & _PLACE_MASK), end_column, kind


@dataclass
class AstUnitContext(UnitContext):
    """A unit built by ast_front: positions and code from the stdlib tree and the file's text."""

    source: SourceText = None
    # LibCST node -> the stdlib node it was built from, or its place (an int: unpack_place) where
    # the unit was built compact (ast_front.convert_unit)
    origins: dict = field(default_factory=dict)
    fixed: dict = field(default_factory=dict)  # node -> (start, end) offsets (or packed_span's int): comments, string pieces
    sole_arguments: set = field(default_factory=set)  # the one argument of a call
    name_only: set = field(default_factory=set)  # parameter names built from an `ast.arg` (name: annotation)
    statements: list = field(default_factory=list)  # (start, end, indentation) of each statement, in order

    # (statements indexed, their starts in source order, their indexes in that order, the position of
    # each one's parent in that order or -1): built on the first lookup after statements are added
    _outline: tuple = field(default=(0, (), (), ()), repr=False, compare=False)

    def _indent(self, start: int, end: int) -> str:
        """The indentation of the innermost statement holding [start, end): O(log n) per lookup.
        Statements nest, so the innermost holder is the last one (in source order, outer before
        inner) starting at or before `start` that holds `end`, or one of its enclosing ones (a
        linear scan per lookup made a 100,000-statement forward quadratic: 200 s)."""
        statements = self.statements
        count, starts, order, parents = self._outline
        if count != len(statements):
            # units may be added out of source order (a whole-model run builds what it reaches)
            order = sorted(range(len(statements)), key=lambda i: statements[i][0])
            starts, parents, open_ = [], [], []
            for position, index in enumerate(order):
                first, last, _ = statements[index]
                while open_ and statements[order[open_[-1]]][1] < last:
                    open_.pop()
                parents.append(open_[-1] if open_ else -1)
                starts.append(first)
                open_.append(position)
            self._outline = count, starts, order, parents = len(statements), starts, order, parents
        position = bisect_right(starts, start) - 1
        while position >= 0:
            _, last, indent = statements[order[position]]
            if end <= last:
                return indent
            position = parents[position]
        return ""

    def _text(self, start: int, end: int) -> str:
        text = self.source.text
        if text.find("\n", start, end) < 0:  # one line (nearly every site): nothing to dedent
            return text[start:end]
        return self.source.dedented(start, end, self._indent(start, end))

    def span(self, node) -> tuple[int, int]:
        """[start, end) character offsets of what LibCST's position of `node` covers."""
        if self.stand_ins:  # (a node's hash is LibCST's, in Python: asked only where there are any)
            node = self.stand_ins.get(node, node)
        key = node  # the tables hold their nodes (an id() per node was 32 more bytes a node)
        fixed = self.fixed.get(key)
        if fixed is not None:
            return (fixed >> 32, fixed & _PLACE_MASK) if type(fixed) is int else fixed
        origin = self.origins.get(key)
        if origin is None:
            raise KeyError(node)  # a node the analysis made (LibCST has no position for it either)
        if type(origin) is int:  # a place (ast_front's compact units): the stdlib node is gone
            line, column, end_line, end_column, kind = unpack_place(origin)
        elif type(origin) is tuple:  # a place with a field too large to pack
            line, column, end_line, end_column, kind = origin
        else:
            line, column, end_line, end_column, kind = (origin.lineno, origin.col_offset, origin.end_lineno,
                                                        origin.end_col_offset, type(origin))
        start, end = self.source.offset(line, column), self.source.offset(end_line, end_column)
        if key in self.name_only:
            return start, start + len(node.value)
        if (kind is ast.Tuple and self.source.parenthesized_span(start, end)) or kind is ast.GeneratorExp:
            start = self.source.next_significant(start + 1)
            end = self.source.previous_significant(end - 1) + 1
        return start, end

    def position(self, node) -> tuple[int, int, int, int]:
        start, end = self.span(node)
        line, column = self.source.line_column(start)
        end_line, end_column = self.source.line_column(end)
        return line, column + 1, end_line, end_column + 1

    def bare_code(self, node) -> str:
        return self._text(*self.span(node))

    def node_code(self, node) -> str:
        if node not in self.origins and type(node) is cst.BinaryOperation and node in self.stand_ins:
            # `a @= b` read as `a @ b`: LibCST prints the made operator with its default spaces
            return self.node_code(node.left) + " @ " + self.node_code(node.right)
        start, end = own = self.span(node)
        pairs = []
        source, text = self.source, self.source.text
        while True:
            before = source.previous_significant(start)
            if before < 0 or text[before] != "(":
                break
            after = source.next_significant(end)
            if after >= len(text) or text[after] != ")":
                break
            start, end = before, after + 1
            pairs.append((start, end))
        if pairs and node in self.sole_arguments:
            pairs.pop()  # the outermost pair is the call's own
        start, end = pairs[-1] if pairs else own
        return self._text(start, end)

    def children(self, node) -> list:
        fields = CHILD_FIELDS.get(type(node))
        if fields is None:
            return []  # operators, `*`, dots: no expression inside
        children = []
        for name in fields:
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                children.append(value)
            elif isinstance(value, (list, tuple)):
                children.extend(value)
        return children
