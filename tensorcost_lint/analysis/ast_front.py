"""The stdlib `ast` front end: LibCST trees built from the tree flake8 already parsed, no second parse.

LibCST's parser costs several times `ast.parse` (every token, space and comment becomes a node), and
the flake8 plugin is handed the stdlib tree of each file for free. This module builds, from that
tree, the LibCST nodes the one analysis reads (function_flow, evaluator, call_sites, annotations):
the same classes with the same fields, in the same shape LibCST's parser gives them (`elif` as a
nested If, implicit string concatenation as ConcatenatedString, `a and b and c` nested to the left,
`x[a, b]` as two subscript elements, one-line bodies as SimpleStatementSuite, statements joined by
`;` as one SimpleStatementLine carrying the line's trailing comment). Spaces are left at LibCST's
defaults: nothing in the analysis reads them; positions and source text come from the stdlib tree
and the file's lines (ast_positions.AstUnitContext).

Anything this module does not build exactly (a `match` statement, a starred subscript, a call inside
an f-string concatenated with other strings, code after a statement that is neither `;` nor a
comment, a line continued by a backslash before a statement) raises
Unsupported, and that unit is parsed by LibCST as before: the two front ends give the same findings
(tests/analysis/test_ast_front.py runs both over every fixture and example).
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys

import libcst as cst

from .ast_positions import AstUnitContext, SourceText, Unsupported

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


_BINARY = {ast.Add: cst.Add, ast.Sub: cst.Subtract, ast.Mult: cst.Multiply, ast.Div: cst.Divide,
           ast.FloorDiv: cst.FloorDivide, ast.Mod: cst.Modulo, ast.Pow: cst.Power, ast.MatMult: cst.MatrixMultiply,
           ast.LShift: cst.LeftShift, ast.RShift: cst.RightShift, ast.BitOr: cst.BitOr, ast.BitXor: cst.BitXor,
           ast.BitAnd: cst.BitAnd}
_AUGMENTED = {ast.Add: cst.AddAssign, ast.Sub: cst.SubtractAssign, ast.Mult: cst.MultiplyAssign,
              ast.Div: cst.DivideAssign, ast.FloorDiv: cst.FloorDivideAssign, ast.Mod: cst.ModuloAssign,
              ast.Pow: cst.PowerAssign, ast.MatMult: cst.MatrixMultiplyAssign, ast.LShift: cst.LeftShiftAssign,
              ast.RShift: cst.RightShiftAssign, ast.BitOr: cst.BitOrAssign, ast.BitXor: cst.BitXorAssign,
              ast.BitAnd: cst.BitAndAssign}
_UNARY = {ast.USub: cst.Minus, ast.UAdd: cst.Plus, ast.Invert: cst.BitInvert, ast.Not: cst.Not}
_BOOLEAN = {ast.And: cst.And, ast.Or: cst.Or}
_COMPARE = {ast.Eq: cst.Equal, ast.NotEq: cst.NotEqual, ast.Lt: cst.LessThan, ast.LtE: cst.LessThanEqual,
            ast.Gt: cst.GreaterThan, ast.GtE: cst.GreaterThanEqual, ast.Is: cst.Is, ast.IsNot: cst.IsNot,
            ast.In: cst.In, ast.NotIn: cst.NotIn}
_OPERATORS: dict = {}  # one operator node per class: the analysis reads only their type


def _operator(table, op):
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


class Converter:
    """Builds one unit's LibCST nodes from its stdlib nodes, recording where each came from."""

    def __init__(self, source: SourceText, ctx: AstUnitContext, indent: str = "") -> None:
        self.source = source
        self.ctx = ctx
        self.origins = ctx.origins  # id(cst node) -> stdlib node
        self.indent = indent  # the indentation of the statement being built (LibCST's indent tokens)

    def enter(self, statement, indent: str | None = None) -> None:
        """Note the statement's span and indentation (multi-line code is printed relative to it)."""
        if indent is not None:
            self.indent = indent
        first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())])
        start = self.source.starts[first - 1] if first < statement.lineno else \
            self.source.offset(statement.lineno, statement.col_offset)
        self.ctx.statements.append((start, self.source.offset(statement.end_lineno, statement.end_col_offset),
                                    self.indent))

    # -- statements ---------------------------------------------------------------------------------
    def block(self, statements: list, header_line: int | None = None):
        """An indented block, or a SimpleStatementSuite when the body follows its header's colon."""
        first = statements[0]
        if not self.source.starts_line(first):
            body = []
            for statement in statements:
                self.enter(statement)
                body.append(self.small(statement))
            return M.SimpleStatementSuite(body=body)
        return M.IndentedBlock(body=self.statements(statements))

    def statements(self, statements: list) -> list:
        result, group = [], []
        outer = self.indent
        for statement in statements:
            if group and not isinstance(statement, _COMPOUND) and not self.source.starts_line(statement):
                self.enter(statement)
            else:
                self.enter(statement, self.source.indentation(statement.lineno))
            if isinstance(statement, _COMPOUND):
                if group:
                    result.append(self.line(group))
                    group = []
                result.append(self.compound(statement))
            elif group and not self.source.starts_line(statement):
                group.append(statement)  # `a = 1; b = 2`: one line
            else:
                if group:
                    result.append(self.line(group))
                group = [statement]
        if group:
            result.append(self.line(group))
        self.indent = outer
        return result

    def line(self, group: list):
        comment = self.source.trailing_comment(group[-1])
        if comment is False:
            raise Unsupported("code after the statement")
        trailing = M.TrailingWhitespace()
        if comment is not None:
            node = M.Comment(value=comment[2])
            self.ctx.fixed[id(node)] = comment[:2]
            trailing = M.TrailingWhitespace(comment=node)
        return M.SimpleStatementLine(body=[self.small(s) for s in group], trailing_whitespace=trailing)

    def compound(self, node):
        kind = type(node)
        if kind is ast.If:
            return self.if_(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            return self.function(node)
        if kind is ast.ClassDef:
            bases = [M.Arg(value=self.expr(b), star="") for b in node.bases]
            if len(bases) == 1 and not node.keywords:
                self.ctx.sole_arguments.add(id(bases[0].value))  # `class A(B)`: the parentheses are the class's
            return M.ClassDef(name=self.name(node.name), body=self.block(node.body), bases=bases,
                        keywords=[self.keyword(k) for k in node.keywords],
                        decorators=[M.Decorator(decorator=self.expr(d)) for d in node.decorator_list])
        if kind is ast.For or kind is ast.AsyncFor:
            return M.For(target=self.expr(node.target), iter=self.expr(node.iter), body=self.block(node.body),
                        orelse=self.else_(node.orelse),
                        asynchronous=M.Asynchronous() if kind is ast.AsyncFor else None)
        if kind is ast.While:
            return M.While(test=self.expr(node.test), body=self.block(node.body), orelse=self.else_(node.orelse))
        if kind is ast.With or kind is ast.AsyncWith:
            items = [M.WithItem(item=self.expr(i.context_expr),
                          asname=M.AsName(name=self.expr(i.optional_vars)) if i.optional_vars else None)
                     for i in node.items]
            return M.With(items=items, body=self.block(node.body),
                        asynchronous=M.Asynchronous() if kind is ast.AsyncWith else None)
        if kind is ast.Try or kind.__name__ == "TryStar":
            handler = cst.ExceptHandler if kind is ast.Try else cst.ExceptStarHandler
            handlers = [make(handler, body=self.block(h.body), type=self.expr(h.type) if h.type else None,
                             name=M.AsName(name=self.name(h.name)) if h.name else None)
                        for h in node.handlers]
            finalbody = M.Finally(body=self.block(node.finalbody)) if node.finalbody else None
            return make(cst.Try if kind is ast.Try else cst.TryStar, body=self.block(node.body), handlers=handlers,
                        orelse=self.else_(node.orelse), finalbody=finalbody)
        raise Unsupported(kind.__name__)

    def if_(self, node):
        orelse = None
        if node.orelse:
            first = node.orelse[0]
            if len(node.orelse) == 1 and type(first) is ast.If and self.source.is_elif(first):
                orelse = self.if_(first)
            else:
                orelse = M.Else(body=self.block(node.orelse))
        return M.If(test=self.expr(node.test), body=self.block(node.body), orelse=orelse)

    def else_(self, statements):
        return M.Else(body=self.block(statements)) if statements else None

    def function(self, node):
        returns = M.Annotation(annotation=self.expr(node.returns)) if node.returns is not None else None
        return M.FunctionDef(name=self.name(node.name), params=self.parameters(node.args),
                    body=self.block(node.body), returns=returns,
                    decorators=[M.Decorator(decorator=self.expr(d)) for d in node.decorator_list],
                    asynchronous=M.Asynchronous() if type(node) is ast.AsyncFunctionDef else None)

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
        self.origins[id(name)] = arg  # `arg` spans the name (and its annotation): the name comes first
        self.ctx.name_only.add(id(name))
        return M.Param(name=name, annotation=annotation,
                    default=self.expr(default) if default is not None else None, star=star)

    def small(self, node):
        kind = type(node)
        made = self._small(node, kind)
        self.origins[id(made)] = node
        return made

    def _small(self, node, kind):
        if kind is ast.Assign:
            return M.Assign(targets=[M.AssignTarget(target=self.expr(t)) for t in node.targets],
                        value=self.expr(node.value))
        if kind is ast.Expr:
            return M.Expr(value=self.expr(node.value))
        if kind is ast.Return:
            return M.Return(value=self.expr(node.value) if node.value is not None else None)
        if kind is ast.AnnAssign:
            return M.AnnAssign(target=self.expr(node.target),
                        annotation=M.Annotation(annotation=self.expr(node.annotation)),
                        value=self.expr(node.value) if node.value is not None else None)
        if kind is ast.AugAssign:
            return M.AugAssign(target=self.expr(node.target), operator=_operator(_AUGMENTED, node.op),
                        value=self.expr(node.value))
        if kind is ast.Pass:
            return M.Pass()
        if kind is ast.Raise:
            return M.Raise(exc=self.expr(node.exc) if node.exc is not None else None,
                        cause=M.From(item=self.expr(node.cause)) if node.cause is not None else None)
        if kind is ast.Assert:
            return M.Assert(test=self.expr(node.test), msg=self.expr(node.msg) if node.msg is not None else None)
        if kind is ast.Break:
            return M.Break()
        if kind is ast.Continue:
            return M.Continue()
        if kind is ast.Delete:
            targets = [self.expr(t) for t in node.targets]
            target = targets[0] if len(targets) == 1 else M.Tuple(
                elements=[M.Element(value=t) for t in targets])
            return M.Del(target=target)
        if kind is ast.Global or kind is ast.Nonlocal:
            names = [M.NameItem(name=self.name(n)) for n in node.names]
            return make(cst.Global if kind is ast.Global else cst.Nonlocal, names=names)
        if kind is ast.Import:
            return M.Import(names=[self.alias(a) for a in node.names])
        if kind is ast.ImportFrom:
            if len(node.names) == 1 and node.names[0].name == "*":
                names = M.ImportStar()
            else:
                names = [self.alias(a) for a in node.names]
            return M.ImportFrom(module=self.dotted(node.module) if node.module else None, names=names,
                        relative=[M.Dot() for _ in range(node.level)])
        raise Unsupported(kind.__name__)

    def alias(self, alias: ast.alias):
        return M.ImportAlias(name=self.dotted(alias.name),
                    asname=M.AsName(name=self.name(alias.asname)) if alias.asname else None)

    def dotted(self, text: str):
        parts = text.split(".")
        node = self.name(parts[0])
        for part in parts[1:]:
            node = M.Attribute(value=node, attr=self.name(part))
        return node

    def name(self, value: str):
        return M.Name(value=value)

    # -- expressions --------------------------------------------------------------------------------
    def expr(self, node):
        handler = _EXPRESSIONS.get(type(node))
        if handler is None:
            raise Unsupported(type(node).__name__)
        made = handler(self, node)
        self.origins[id(made)] = node
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
            self.ctx.fixed[id(piece)] = span
            made.append(piece)
        result = made[-1]
        for piece in reversed(made[:-1]):
            result = M.ConcatenatedString(left=piece, right=result)
            self.ctx.fixed[id(result)] = (self.ctx.fixed[id(piece)][0], self.ctx.fixed[id(made[-1])][1])
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
        items = [(a.lineno, a.col_offset, a) for a in node.args] + [(k.lineno, k.col_offset, k) for k in node.keywords]
        if node.keywords and node.args:
            items.sort(key=lambda item: item[:2])
        args = []
        for _, _, item in items:
            if type(item) is ast.keyword:
                args.append(self.keyword(item))
            elif type(item) is ast.Starred:
                args.append(M.Arg(value=self.expr(item.value), star="*"))
            else:
                args.append(M.Arg(value=self.expr(item), star=""))
        made = M.Call(func=self.expr(node.func), args=args)
        if len(items) == 1 and type(items[0][2]) is not ast.keyword:
            self.ctx.sole_arguments.add(id(args[0].value))  # `f(a)`: the parentheses are the call's
        return made

    def keyword(self, keyword: ast.keyword):
        if keyword.arg is None:
            return M.Arg(value=self.expr(keyword.value), star="**")
        return M.Arg(value=self.expr(keyword.value), keyword=self.name(keyword.arg), star="")

    def _binary(self, node):
        return M.BinaryOperation(left=self.expr(node.left), operator=_operator(_BINARY, node.op),
                    right=self.expr(node.right))

    def _unary(self, node):
        return M.UnaryOperation(operator=_operator(_UNARY, node.op), expression=self.expr(node.operand))

    def _boolean(self, node):
        operator = _operator(_BOOLEAN, node.op)
        values = [self.expr(v) for v in node.values]
        result = values[0]
        for value in values[1:]:  # `a and b and c` is ((a and b) and c) in LibCST
            result = M.BooleanOperation(left=result, operator=operator, right=value)
        return result

    def _compare(self, node):
        targets = [M.ComparisonTarget(operator=_operator(_COMPARE, op), comparator=self.expr(c))
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
            self.origins[id(made)] = node
            return made
        if type(node) is ast.Starred:
            raise Unsupported("starred subscript")
        return M.Index(value=self.expr(node))


_EXPRESSIONS = {
    ast.Name: Converter._name, ast.Constant: Converter._constant, ast.JoinedStr: Converter._joined,
    ast.Attribute: Converter._attribute, ast.Call: Converter._call, ast.BinOp: Converter._binary,
    ast.UnaryOp: Converter._unary, ast.BoolOp: Converter._boolean, ast.Compare: Converter._compare,
    ast.IfExp: Converter._if_expression, ast.NamedExpr: Converter._named, ast.Await: Converter._await,
    ast.Yield: Converter._yield, ast.YieldFrom: Converter._yield_from, ast.Lambda: Converter._lambda,
    ast.Tuple: Converter._tuple, ast.List: Converter._list, ast.Set: Converter._set, ast.Dict: Converter._dict,
    ast.ListComp: Converter._list_comp, ast.SetComp: Converter._set_comp, ast.GeneratorExp: Converter._generator,
    ast.DictComp: Converter._dict_comp, ast.Subscript: Converter._subscript,
}
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def convert_unit(settings, recorder, source: SourceText, statement, line_offset: int):
    """(unit context, LibCST statement) for one top-level statement of the file; raises Unsupported."""
    ctx = AstUnitContext(settings, recorder, None, line_offset, source=source)
    converter = Converter(source, ctx)
    if not source.starts_line(statement):
        raise Unsupported("a statement after `;`")
    converter.enter(statement, source.indentation(statement.lineno))
    if isinstance(statement, _COMPOUND):
        return ctx, converter.compound(statement)
    return ctx, converter.line([statement])


def convert_module(settings, recorder, source: SourceText, tree: ast.Module):
    """(unit context, LibCST module) for the whole file; raises Unsupported."""
    ctx = AstUnitContext(settings, recorder, None, 0, source=source)
    body = Converter(source, ctx).statements(tree.body) if tree.body else []
    return ctx, M.Module(body=body)
