"""Forward references: the text of a string annotation (`"Float[Tensor, 'b s']"`) as an ANode.

A small recursive-descent parser over the subset of Python that annotations use (dotted names,
subscripts, strings, numbers, `...`, `None`, `|`, slices). It never evaluates anything, and inner
string literals keep their position: their AString.start_offset is the outer string's plus the
offset of their contents, so an error deep inside still lands on the right column.
Text that is not such an annotation becomes AOther (a string annotation may be any Python type).
"""

from __future__ import annotations

from .annotation_nodes import AName, ANode, ANone, AOther, AString, ASubscript, AUnion
from .limits import MAX_DEPTH, MAX_TEXT_CHARS

_STRING_PREFIXES = frozenset(("r", "u", "f", "rf", "fr", "b", "br", "rb"))


class _Fail(Exception):
    pass


class _Reader:
    def __init__(self, text: str, base: int) -> None:
        self.text = text
        self.base = base
        self.i = 0

    def skip(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def peek(self, s: str) -> bool:
        self.skip()
        return self.text.startswith(s, self.i)

    def take(self, s: str) -> bool:
        if self.peek(s):
            self.i += len(s)
            return True
        return False

    def union(self, depth: int) -> ANode:
        if depth > MAX_DEPTH:
            raise _Fail
        options = [self.postfix(depth)]
        while self.take("|"):
            options.append(self.postfix(depth))
        return options[0] if len(options) == 1 else AUnion(tuple(options))

    def postfix(self, depth: int) -> ANode:
        node = self.primary(depth)
        while self.take("["):
            items = self.items(depth + 1, "]")
            node = ASubscript(node, items) if type(node) is AName else AOther("subscript")
        return node

    def items(self, depth: int, close: str) -> tuple[ANode, ...]:
        out: list[ANode] = []
        while not self.take(close):
            self.skip()
            start = self.i
            item = self.union(depth)
            if self.take(":"):  # a slice such as torchtyping's "batch": 10, kept as source text
                self.union(depth)
                item = AOther(self.text[start:self.i].strip())
            out.append(item)
            if not self.take(","):
                if not self.take(close):
                    raise _Fail
                break
        return tuple(out)

    def primary(self, depth: int) -> ANode:
        self.skip()
        text, i = self.text, self.i
        if i >= len(text):
            raise _Fail
        if text.startswith("...", i):
            self.i += 3
            return AOther("...")
        ch = text[i]
        if ch in "\"'":
            return self.string("")
        if ch == "(":
            self.i += 1
            inner = self.union(depth + 1)
            if not self.take(")"):
                raise _Fail
            return inner
        if ch == "[":
            self.i += 1
            self.items(depth + 1, "]")
            return AOther("list")
        if ch == "-" or ch.isdigit():
            j = i + 1
            while j < len(text) and (text[j].isalnum() or text[j] in "._"):
                j += 1
            self.i = j
            return AOther(text[i:j].replace(" ", ""))
        if ch == "_" or ch.isidentifier():
            name = self.name()
            if name.lower() in _STRING_PREFIXES and self.i < len(text) and text[self.i] in "\"'":
                return self.string(name.lower())
            while self.take("."):
                self.skip()
                name += "." + self.name()
            return ANone() if name == "None" else AName(name)
        raise _Fail

    def name(self) -> str:
        text, start = self.text, self.i
        if start >= len(text) or not (text[start] == "_" or text[start].isidentifier()):
            raise _Fail
        j = start + 1
        while j < len(text) and (text[j] == "_" or ("_" + text[j]).isidentifier()):
            j += 1
        self.i = j
        return text[start:j]

    def string(self, prefix: str) -> ANode:
        text, i = self.text, self.i
        quote = text[i] * 3 if text.startswith(text[i] * 3, i) else text[i]
        j = i + len(quote)
        start = j
        while True:
            if j >= len(text):
                raise _Fail
            if text[j] == "\\":
                j += 2
                continue
            if text.startswith(quote, j):
                break
            j += 1
        self.i = j + len(quote)
        if "b" in prefix:
            return AOther(text[i - len(prefix):self.i])
        return AString(text[start:j], self.base + start)


def parse_annotation_text(text: str, start_offset: int = 0) -> ANode:
    """The ANode for annotation source text; AOther when it is not a form we read."""
    if len(text) > MAX_TEXT_CHARS:
        return AOther(text[:40])
    reader = _Reader(text, start_offset)
    try:
        node = reader.union(0)
        reader.skip()
        if reader.i != len(text):
            return AOther(text)
        return node
    except (_Fail, IndexError):
        return AOther(text)
