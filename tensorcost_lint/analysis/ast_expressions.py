"""The expressions half of the stdlib-ast front end (ast_front.py): LibCST expression nodes built
from stdlib ones, as LibCST's parser shapes them (`a and b and c` nested to the left, `x[a, b]` as
two subscript elements, `"a" "b"` as a right-nested ConcatenatedString, call arguments in source
order), and the constructors that build LibCST nodes without its parser.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys

import libcst as cst

from .ast_positions import PLACE_FIELD, AstUnitContext, SourceText, Unsupported


def _maker(cls):
    """A constructor that sets the slots directly (LibCST's checks guard hand-built trees; these
    mirror a tree CPython has parsed), with LibCST's defaults made once and shared. Its source is
    made here, from the class's field names, as `dataclasses` makes `__init__` (never from the
    analysed file)."""
    names, defaults = [], {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            defaults[f"_d_{f.name}"] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            defaults[f"_d_{f.name}"] = f.default_factory()
        names.append(f.name)
    parameters = ", ".join(f"{n}=_d_{n}" if f"_d_{n}" in defaults else n for n in names)
    body = "".join(f"    put(node, {n!r}, {n})\n" for n in names)
    code = f"def make({'*, ' if parameters else ''}{parameters}):\n    node = new(cls)\n{body}    return node\n"
    scope = {"new": object.__new__, "put": object.__setattr__, "cls": cls, **defaults}
    exec(compile(code, f"<ast_front make {cls.__name__}>", "exec"), scope)  # noqa: S102 - our own template
    return scope["make"]


class _Makers:
    """`M.Name(value="x")`: each class's constructor made on first use (most files need a few)."""

    def __getattr__(self, name: str):
        maker = _maker(getattr(cst, name))
        setattr(self, name, maker)
        return maker


M = _Makers()


def make(cls, **fields):
    return getattr(M, cls.__name__)(**fields)


class _Places:
    """A node's place (line, column, end line, end column, and whether it is a tuple or a
    generator expression) packed into one int (ast_positions.unpack_place): a tuple of five held
    ~80 bytes a node, a 100,000-line forward's places ~80 MB. A place with a column past 2**32
    (no real file) stays a tuple."""

    __slots__ = ()

    def __call__(self, node):
        line, column, end_line, end_column = node.lineno, node.col_offset, node.end_lineno, node.end_col_offset
        kind = type(node)
        if column >= PLACE_FIELD or end_column >= PLACE_FIELD or end_line - line >= PLACE_FIELD:
            return (line, column, end_line, end_column, kind)
        flag = 1 if kind is ast.Tuple else 2 if kind is ast.GeneratorExp else 0
        return ((((line << 32 | end_line - line) << 32 | column) << 32 | end_column) << 2) | flag


def _itself(node):
    return node


_BINARY = {ast.Add: cst.Add, ast.Sub: cst.Subtract, ast.Mult: cst.Multiply, ast.Div: cst.Divide,
           ast.FloorDiv: cst.FloorDivide, ast.Mod: cst.Modulo, ast.Pow: cst.Power, ast.MatMult: cst.MatrixMultiply,
           ast.LShift: cst.LeftShift, ast.RShift: cst.RightShift, ast.BitOr: cst.BitOr, ast.BitXor: cst.BitXor,
           ast.BitAnd: cst.BitAnd}
_UNARY = {ast.USub: cst.Minus, ast.UAdd: cst.Plus, ast.Invert: cst.BitInvert, ast.Not: cst.Not}
_BOOLEAN = {ast.And: cst.And, ast.Or: cst.Or}
_COMPARE = {ast.Eq: cst.Equal, ast.NotEq: cst.NotEqual, ast.Lt: cst.LessThan, ast.LtE: cst.LessThanEqual,
            ast.Gt: cst.GreaterThan, ast.GtE: cst.GreaterThanEqual, ast.Is: cst.Is, ast.IsNot: cst.IsNot,
            ast.In: cst.In, ast.NotIn: cst.NotIn}
_OPERATORS: dict = {}  # one operator node per class: the analysis reads only their type


def operator_node(table, op):
    cls = table[type(op)]
    node = _OPERATORS.get(cls)
    if node is None:
        node = _OPERATORS[cls] = cls()
    return node


# One string token: an optional prefix, then a complete quoted literal (no implicit concatenation).
_ONE_STRING = re.compile(
    r"[rRbBuUfF]{0,2}(?:'''(?:[^\\]|\\.)*?'''|\"\"\"(?:[^\\]|\\.)*?\"\"\"|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")",
    re.DOTALL)
_STRING_START = re.compile(r"[rRbBuUfF]{0,2}(?:'''|\"\"\"|'|\")")


class ExpressionBuilder:
    """Builds LibCST expressions from stdlib ones, recording the stdlib node each came from."""

    def __init__(self, source: SourceText, ctx: AstUnitContext, compact: bool = False) -> None:
        self.source = source
        self.ctx = ctx
        self.origins = ctx.origins  # LibCST node -> stdlib node, or its place when `compact`
        # compact: the built tree keeps no stdlib node, so the stdlib tree can be freed as it is read
        self.origin = _Places() if compact else _itself

    def name(self, value: str):
        return M.Name(value=value)

    def parameters(self, arguments: ast.arguments):
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
        params = [self.param(a, d) for a, d in zip(positional, defaults)]
        posonly = params[:len(arguments.posonlyargs)]
        kwonly = [self.param(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)]
        if arguments.vararg is not None:
            star_arg = self.param(arguments.vararg, None, "*")
        else:
            star_arg = M.ParamStar() if kwonly else cst.MaybeSentinel.DEFAULT
        star_kwarg = self.param(arguments.kwarg, None, "**") if arguments.kwarg is not None else None
        return M.Parameters(params=params[len(posonly):], posonly_params=posonly, kwonly_params=kwonly,
                    star_arg=star_arg, star_kwarg=star_kwarg,
                    posonly_ind=M.ParamSlash() if posonly else cst.MaybeSentinel.DEFAULT)

    def param(self, arg: ast.arg, default, star: str = ""):
        annotation = M.Annotation(annotation=self.expr(arg.annotation)) if arg.annotation is not None else None
        name = self.name(arg.arg)
        self.origins[name] = self.origin(arg)  # `arg` spans the name (and its annotation): the name comes first
        self.ctx.name_only.add(name)
        return M.Param(name=name, annotation=annotation,
                    default=self.expr(default) if default is not None else None, star=star)

    def expr(self, node):
        handler = _EXPRESSIONS.get(type(node))
        if handler is None:
            raise Unsupported(type(node).__name__)
        made = handler(self, node)
        self.origins[made] = self.origin(node)
        return made

    def _name(self, node):
        return M.Name(value=node.id)

    def _constant(self, node):
        value = node.value
        if value is None or value is True or value is False:
            return M.Name(value=repr(value))
        if value is Ellipsis:
            return M.Ellipsis()
        kind = type(value)
        if kind is str or kind is bytes:
            return self.strings(node)
        text = self.source.segment(node)
        if kind is int:
            return M.Integer(value=text)
        if kind is float:
            return M.Float(value=text)
        return M.Imaginary(value=text)

    def strings(self, node):
        """One string token, or LibCST's right-nested ConcatenatedString for `"a" "b" "c"`."""
        text = self.source.segment(node)
        if _ONE_STRING.fullmatch(text):
            return M.SimpleString(value=text)
        return self.concatenation(node)

    def concatenation(self, node):
        """`"a" f"{b}" "c"`: the stdlib tree merges the literals into one node, LibCST keeps one per
        token. An f-string token is read on its own (parsed, never run); its expressions then have
        no place in the file, so one that can hold a call site or a finding (a call, an `@`) sends
        the unit to LibCST's parser."""
        if type(node) is ast.JoinedStr and sys.version_info >= (3, 12):
            raise Unsupported("f-string tokens")  # tokenize splits f-strings into parts since 3.12
        pieces = self.source.string_tokens(node)
        if pieces is None:
            raise Unsupported("string concatenation")
        if type(node) is ast.JoinedStr and any(
                type(inner) is ast.Call or (type(inner) is ast.BinOp and type(inner.op) is ast.MatMult)
                for inner in ast.walk(node)):
            raise Unsupported("a call inside a concatenated f-string")
        made = []
        for span, token in pieces:
            start = _STRING_START.match(token).group()
            if "f" in start.lower():
                try:
                    parsed = ast.parse(token, mode="eval").body
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    raise Unsupported("f-string") from None
                origins, self.origins = self.origins, {}  # positions relative to the token: not kept
                try:
                    parts = self.fstring_parts(parsed.values) if type(parsed) is ast.JoinedStr else []
                finally:
                    self.origins = origins
                piece = M.FormattedString(parts=parts, start=start, end=start.lstrip("rRbBuUfF"))
            else:
                piece = M.SimpleString(value=token)
            self.ctx.fixed[piece] = span
            made.append(piece)
        result = made[-1]
        for piece in reversed(made[:-1]):
            result = M.ConcatenatedString(left=piece, right=result)
            self.ctx.fixed[result] = (self.ctx.fixed[piece][0], self.ctx.fixed[made[-1]][1])
        return result

    def _joined(self, node):
        text = self.source.segment(node)
        if not _ONE_STRING.fullmatch(text):
            return self.concatenation(node)
        start = _STRING_START.match(text).group()
        quote = start.lstrip("rRbBuUfF")
        return M.FormattedString(parts=self.fstring_parts(node.values), start=start, end=quote)

    def fstring_parts(self, values):
        parts = []
        for value in values:
            if type(value) is ast.Constant:
                parts.append(M.FormattedStringText(value=value.value))
            elif type(value) is ast.FormattedValue:
                spec = value.format_spec
                parts.append(M.FormattedStringExpression(expression=self.expr(value.value),
                                  conversion=chr(value.conversion) if value.conversion != -1 else None,
                                  format_spec=self.fstring_parts(spec.values) if spec is not None else None))
            else:
                raise Unsupported("f-string part")
        return parts

    def _attribute(self, node):
        return M.Attribute(value=self.expr(node.value), attr=self.name(node.attr))

    def _call(self, node):
        if node.keywords and node.args:
            items = sorted(node.args + node.keywords, key=lambda item: (item.lineno, item.col_offset))
        else:
            items = node.args or node.keywords
        args = []
        for item in items:
            if type(item) is ast.keyword:
                args.append(self.keyword(item))
            elif type(item) is ast.Starred:
                args.append(M.Arg(value=self.expr(item.value), star="*"))
            else:
                args.append(M.Arg(value=self.expr(item), star=""))
        made = M.Call(func=self.expr(node.func), args=args)
        if len(items) == 1 and type(items[0]) is not ast.keyword:
            self.ctx.sole_arguments.add(args[0].value)  # `f(a)`: the parentheses are the call's
        return made

    def keyword(self, keyword: ast.keyword):
        if keyword.arg is None:
            return M.Arg(value=self.expr(keyword.value), star="**")
        return M.Arg(value=self.expr(keyword.value), keyword=self.name(keyword.arg), star="")

    def _binary(self, node):
        return M.BinaryOperation(left=self.expr(node.left), operator=operator_node(_BINARY, node.op),
                    right=self.expr(node.right))

    def _unary(self, node):
        return M.UnaryOperation(operator=operator_node(_UNARY, node.op), expression=self.expr(node.operand))

    def _boolean(self, node):
        operator = operator_node(_BOOLEAN, node.op)
        values = [self.expr(v) for v in node.values]
        result = values[0]
        for value in values[1:]:  # `a and b and c` is ((a and b) and c) in LibCST
            result = M.BooleanOperation(left=result, operator=operator, right=value)
        return result

    def _compare(self, node):
        targets = [M.ComparisonTarget(operator=operator_node(_COMPARE, op), comparator=self.expr(c))
                   for op, c in zip(node.ops, node.comparators)]
        return M.Comparison(left=self.expr(node.left), comparisons=targets)

    def _if_expression(self, node):
        return M.IfExp(test=self.expr(node.test), body=self.expr(node.body), orelse=self.expr(node.orelse))

    def _named(self, node):
        return M.NamedExpr(target=self.expr(node.target), value=self.expr(node.value))

    def _await(self, node):
        return M.Await(expression=self.expr(node.value))

    def _yield(self, node):
        return M.Yield(value=self.expr(node.value) if node.value is not None else None)

    def _yield_from(self, node):
        return M.Yield(value=M.From(item=self.expr(node.value)))

    def _lambda(self, node):
        return M.Lambda(params=self.parameters(node.args), body=self.expr(node.body))

    def elements(self, elts):
        return [M.StarredElement(value=self.expr(e.value)) if type(e) is ast.Starred
                else M.Element(value=self.expr(e)) for e in elts]

    def _tuple(self, node):
        return M.Tuple(elements=self.elements(node.elts))

    def _list(self, node):
        return M.List(elements=self.elements(node.elts))

    def _set(self, node):
        return M.Set(elements=self.elements(node.elts))

    def _dict(self, node):
        elements = [M.StarredDictElement(value=self.expr(v)) if k is None
                    else M.DictElement(key=self.expr(k), value=self.expr(v))
                    for k, v in zip(node.keys, node.values)]
        return M.Dict(elements=elements)

    def comprehension(self, generators):
        inner = None
        for generator in reversed(generators):
            inner = M.CompFor(target=self.expr(generator.target), iter=self.expr(generator.iter),
                         ifs=[M.CompIf(test=self.expr(t)) for t in generator.ifs], inner_for_in=inner,
                         asynchronous=M.Asynchronous() if generator.is_async else None)
        return inner

    def _list_comp(self, node):
        return M.ListComp(elt=self.expr(node.elt), for_in=self.comprehension(node.generators))

    def _set_comp(self, node):
        return M.SetComp(elt=self.expr(node.elt), for_in=self.comprehension(node.generators))

    def _generator(self, node):
        return M.GeneratorExp(elt=self.expr(node.elt), for_in=self.comprehension(node.generators))

    def _dict_comp(self, node):
        return M.DictComp(key=self.expr(node.key), value=self.expr(node.value),
                    for_in=self.comprehension(node.generators))

    def _subscript(self, node):
        inner = node.slice
        if type(inner) is ast.Tuple and (any(type(e) is ast.Slice for e in inner.elts)
                                         or not self.source.parenthesized(inner)):
            parts = inner.elts  # `x[a, b]`: one element per item, as LibCST reads it
        else:
            parts = [inner]
        elements = [M.SubscriptElement(slice=self.slice(p)) for p in parts]
        return M.Subscript(value=self.expr(node.value), slice=elements)

    def slice(self, node):
        if type(node) is ast.Slice:
            made = M.Slice(lower=self.expr(node.lower) if node.lower is not None else None,
                        upper=self.expr(node.upper) if node.upper is not None else None,
                        step=self.expr(node.step) if node.step is not None else None)
            self.origins[made] = self.origin(node)
            return made
        if type(node) is ast.Starred:
            raise Unsupported("starred subscript")
        return M.Index(value=self.expr(node))


_EXPRESSIONS = {
    ast.Name: ExpressionBuilder._name, ast.Constant: ExpressionBuilder._constant, ast.JoinedStr: ExpressionBuilder._joined,
    ast.Attribute: ExpressionBuilder._attribute, ast.Call: ExpressionBuilder._call, ast.BinOp: ExpressionBuilder._binary,
    ast.UnaryOp: ExpressionBuilder._unary, ast.BoolOp: ExpressionBuilder._boolean, ast.Compare: ExpressionBuilder._compare,
    ast.IfExp: ExpressionBuilder._if_expression, ast.NamedExpr: ExpressionBuilder._named, ast.Await: ExpressionBuilder._await,
    ast.Yield: ExpressionBuilder._yield, ast.YieldFrom: ExpressionBuilder._yield_from, ast.Lambda: ExpressionBuilder._lambda,
    ast.Tuple: ExpressionBuilder._tuple, ast.List: ExpressionBuilder._list, ast.Set: ExpressionBuilder._set, ast.Dict: ExpressionBuilder._dict,
    ast.ListComp: ExpressionBuilder._list_comp, ast.SetComp: ExpressionBuilder._set_comp, ast.GeneratorExp: ExpressionBuilder._generator,
    ast.DictComp: ExpressionBuilder._dict_comp, ast.Subscript: ExpressionBuilder._subscript,
}
