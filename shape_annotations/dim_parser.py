"""parse_dim_expr: the dimension expression grammar (names, ints, + - * //, parentheses).

A hand-written tokenizer and recursive-descent parser: no regex (nothing can backtrack), no eval,
bounded by limits.MAX_TEXT_CHARS and limits.MAX_DEPTH. Every refusal carries the offset of the
offending character inside `text`.

Beyond the core grammar, and because jaxtyping evaluates symbolic dims as Python:
  `a/b` is read as exact division (jaxtyping's `4/2 == 2.0` matches a size of 2 only when exact),
  `d**2` with a small literal exponent is expanded to `d*d`,
  calls, attribute access and `{f-string}` fields raise UnsupportedShape (never guessed).
"""

from __future__ import annotations

from .dim_records import BinOp, Const, DimExpr, Sym, Unknown
from .errors import ShapeError, UnsupportedShape
from .limits import MAX_DEPTH, MAX_SIZE, check_text_size

_MAX_POWER = 8
_PUNCT = ("//", "**", "+", "-", "*", "/", "(", ")", "%", ",", ".", "?")


class _Token:
    __slots__ = ("kind", "text", "start")

    def __init__(self, kind: str, text: str, start: int) -> None:
        self.kind = kind  # "name", "int", "op" or "end"
        self.text = text
        self.start = start


def _is_name_start(ch: str) -> bool:
    return ch == "_" or ch.isidentifier()


def _is_name_char(ch: str) -> bool:
    return ch == "_" or ("_" + ch).isidentifier()


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif "0" <= ch <= "9":
            j = i + 1
            while j < n and ("0" <= text[j] <= "9" or text[j] == "_"):
                j += 1
            literal = text[i:j]
            if literal.endswith("_") or "__" in literal:
                raise ShapeError(f"malformed integer {literal!r}", i, j - i)
            tokens.append(_Token("int", literal, i))
            i = j
        elif _is_name_start(ch):
            j = i + 1
            while j < n and _is_name_char(text[j]):
                j += 1
            tokens.append(_Token("name", text[i:j], i))
            i = j
        elif ch == "{":
            close = text.find("}", i)
            end = n if close < 0 else close + 1
            raise UnsupportedShape(
                f"f-string field {text[i:end]!r} needs the running program's values", i, end - i
            )
        else:
            for punct in _PUNCT:
                if text.startswith(punct, i):
                    tokens.append(_Token("op", punct, i))
                    i += len(punct)
                    break
            else:
                raise ShapeError(f"unexpected character {ch!r} in dimension expression", i)
    tokens.append(_Token("end", "", n))
    return tokens


class _Parser:
    def __init__(self, text: str, implicit_mul: bool, allow_unknown: bool) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0
        self.implicit_mul = implicit_mul
        self.allow_unknown = allow_unknown

    @property
    def tok(self) -> _Token:
        return self.tokens[self.pos]

    def _check_depth(self, depth: int, start: int) -> None:
        if depth > MAX_DEPTH:
            raise ShapeError(f"dimension expression nested deeper than {MAX_DEPTH}", start)

    def expr(self, nest: int) -> tuple[DimExpr, int]:
        self._check_depth(nest, self.tok.start)
        left, depth = self.term(nest)
        while self.tok.kind == "op" and self.tok.text in ("+", "-"):
            op = self.tok
            self.pos += 1
            right, rdepth = self.term(nest)
            depth = max(depth, rdepth) + 1
            self._check_depth(depth, op.start)
            left = BinOp(op.text, left, right)
        return left, depth

    def term(self, nest: int) -> tuple[DimExpr, int]:
        left, depth = self.unary(nest)
        while True:
            tok = self.tok
            if tok.kind == "op" and tok.text in ("*", "//", "/"):
                self.pos += 1
                op = "*" if tok.text == "*" else "//"
            elif tok.kind == "op" and tok.text == "%":
                raise UnsupportedShape("`%` in a dimension is not supported", tok.start)
            elif self._juxtaposed(tok):
                op = "*"  # `3C` in a shape comment: three times C
            else:
                return left, depth
            right, rdepth = self.unary(nest)
            depth = max(depth, rdepth) + 1
            self._check_depth(depth, tok.start)
            left = BinOp(op, left, right)

    def _juxtaposed(self, tok: _Token) -> bool:
        if not self.implicit_mul or self.pos == 0:
            return False
        prev = self.tokens[self.pos - 1]
        adjacent = prev.kind == "int" and prev.start + len(prev.text) == tok.start
        return adjacent and (tok.kind == "name" or tok.text == "(")

    def unary(self, nest: int) -> tuple[DimExpr, int]:
        tok = self.tok
        if tok.kind == "op" and tok.text in ("-", "+"):
            self._check_depth(nest + 1, tok.start)
            self.pos += 1
            operand, depth = self.unary(nest + 1)
            if tok.text == "+":
                return operand, depth
            if type(operand) is Const:
                return Const(-operand.value), depth
            return BinOp("-", Const(0), operand), depth + 1
        return self.power(nest)

    def power(self, nest: int) -> tuple[DimExpr, int]:
        base, depth = self.atom(nest)
        tok = self.tok
        if not (tok.kind == "op" and tok.text == "**"):
            return base, depth
        self.pos += 1
        exp = self.tok
        if exp.kind != "int" or int(exp.text) > _MAX_POWER:
            raise UnsupportedShape(f"only small literal powers (**2 .. **{_MAX_POWER}) are supported", tok.start, 2)
        self.pos += 1
        count = int(exp.text)
        if count == 0:
            return Const(1), 0
        result = base
        for _ in range(count - 1):
            result = BinOp("*", result, base)
            depth += 1
            self._check_depth(depth, tok.start)
        return result, depth

    def atom(self, nest: int) -> tuple[DimExpr, int]:
        tok = self.tok
        if tok.kind == "int":
            self.pos += 1
            value = int(tok.text)
            if value > MAX_SIZE:
                raise ShapeError(f"size {tok.text} exceeds 2**63-1", tok.start, len(tok.text))
            return Const(value), 0
        if tok.kind == "name":
            return self.name(tok)
        if tok.kind == "op" and tok.text == "?":
            self.pos += 1
            return self.unknown(tok, "?")
        if tok.kind == "op" and tok.text == "(":
            self._check_depth(nest + 1, tok.start)
            self.pos += 1
            inner, depth = self.expr(nest + 1)
            if not (self.tok.kind == "op" and self.tok.text == ")"):
                raise ShapeError("unclosed parenthesis", tok.start)
            self.pos += 1
            return inner, depth
        if tok.kind == "end":
            raise ShapeError("expected a dimension name, integer or '('", tok.start)
        raise ShapeError(f"unexpected {tok.text!r} in dimension expression", tok.start, len(tok.text))

    def name(self, tok: _Token) -> tuple[DimExpr, int]:
        self.pos += 1
        nxt = self.tok
        if nxt.kind == "op" and nxt.text == ".":
            raise UnsupportedShape(
                f"attribute access {tok.text}.… needs the running program's values", tok.start, len(tok.text) + 1
            )
        if nxt.kind == "op" and nxt.text == "(" and nxt.start == tok.start + len(tok.text):
            raise UnsupportedShape(f"call {tok.text}(…) cannot be evaluated statically", tok.start, len(tok.text) + 1)
        if tok.text == "_":
            return self.unknown(tok, "_")
        return Sym(tok.text), 0

    def unknown(self, tok: _Token, label: str) -> tuple[DimExpr, int]:
        if not self.allow_unknown:
            raise ShapeError(f"anonymous dimension {label!r} cannot be used in an expression", tok.start)
        return Unknown(label), 0


def parse_dim_expr(text: str, *, implicit_mul: bool = False, allow_unknown: bool = True) -> DimExpr:
    """Parse one dimension: `seq`, `64`, `pos-1`, `d_model//n_heads`, `2*d`, `(h*d)`, `?`, `_`.

    implicit_mul reads `3C` as `3*C` (shape comments); allow_unknown admits `_`/`?` as Unknown.
    Raises ShapeError (offset inside `text`) or UnsupportedShape.
    """
    check_text_size(text, "dimension expression")
    parser = _Parser(text, implicit_mul, allow_unknown)
    if parser.tok.kind == "end":
        raise ShapeError("empty dimension expression", 0)
    result, _ = parser.expr(0)
    tok = parser.tok
    if tok.kind != "end":
        raise ShapeError(f"unexpected {tok.text!r} after dimension expression", tok.start, len(tok.text))
    return result
