"""The stdlib `ast` front end: LibCST trees built from the tree flake8 already parsed, no second parse.

LibCST's parser costs several times `ast.parse` (every token, space and comment becomes a node), and
the flake8 plugin is handed the stdlib tree of each file for free. This module builds, from that
tree, the LibCST nodes the one analysis reads (function_flow, evaluator, call_sites, annotations;
expressions in ast_expressions.py):
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

import libcst as cst

from .ast_expressions import M, ExpressionBuilder, make, operator_node
from .ast_positions import AstUnitContext, SourceText, Unsupported, packed_span


_AUGMENTED = {ast.Add: cst.AddAssign, ast.Sub: cst.SubtractAssign, ast.Mult: cst.MultiplyAssign,
              ast.Div: cst.DivideAssign, ast.FloorDiv: cst.FloorDivideAssign, ast.Mod: cst.ModuloAssign,
              ast.Pow: cst.PowerAssign, ast.MatMult: cst.MatrixMultiplyAssign, ast.LShift: cst.LeftShiftAssign,
              ast.RShift: cst.RightShiftAssign, ast.BitOr: cst.BitOrAssign, ast.BitXor: cst.BitXorAssign,
              ast.BitAnd: cst.BitAndAssign}


class Converter(ExpressionBuilder):
    """Builds one unit's LibCST statements from its stdlib ones (expressions: ExpressionBuilder)."""

    def __init__(self, source: SourceText, ctx: AstUnitContext, indent: str = "", consume: bool = False,
                 compact: bool = False) -> None:
        super().__init__(source, ctx, compact=consume or compact)
        self.indent = indent  # the indentation of the statement being built (LibCST's indent tokens)
        # consume: each statement list lets go of a statement once it is built (the caller owns the
        # stdlib tree and reads it no more): a 100,000-statement unit never holds both whole trees
        self.consume = consume

    def enter(self, statement, indent: str | None = None) -> None:
        """Note the statement's span and indentation (multi-line code is printed relative to it)."""
        if indent is not None:
            self.indent = indent
        decorators = getattr(statement, "decorator_list", None)
        first = min(statement.lineno, *(d.lineno for d in decorators)) if decorators else statement.lineno
        start = self.source.starts[first - 1] if first < statement.lineno else \
            self.source.offset(statement.lineno, statement.col_offset)
        self.ctx.statements.append((start, self.source.offset(statement.end_lineno, statement.end_col_offset),
                                    self.indent))

    # -- statements ---------------------------------------------------------------------------------
    def block(self, statements: list):
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
        for index, statement in enumerate(statements):
            if self.consume:
                statements[index] = None
            compound = isinstance(statement, _COMPOUND)
            joined = bool(group) and not compound and not self.source.starts_line(statement)
            if joined:
                self.enter(statement)
            else:
                self.enter(statement, self.source.indentation(statement.lineno))
            if compound:
                if group:
                    result.append(self.line(group))
                    group = []
                result.append(self.compound(statement))
            elif joined:
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
            self.ctx.fixed[node] = comment[:2]
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
                self.ctx.sole_arguments.add(bases[0].value)  # `class A(B)`: the parentheses are the class's
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

    def small(self, node):
        kind = type(node)
        made = self._small(node, kind)
        self.origins[made] = self.origin(node)
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
            return M.AugAssign(target=self.expr(node.target), operator=operator_node(_AUGMENTED, node.op),
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


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def convert_unit(settings, recorder, source: SourceText, statement, line_offset: int, consume: bool = False):
    """(unit context, LibCST statement) for one top-level statement of the file; raises Unsupported.
    `consume`: the statement's blocks are emptied as they are built (Converter.consume)."""
    ctx = AstUnitContext(settings, recorder, None, line_offset, source=source)
    converter = Converter(source, ctx, consume=consume)
    if not source.starts_line(statement):
        raise Unsupported("a statement after `;`")
    converter.enter(statement, source.indentation(statement.lineno))
    if isinstance(statement, _COMPOUND):
        return ctx, converter.compound(statement)
    return ctx, converter.line([statement])


def convert_definition(settings, recorder, source: SourceText, statement, released: tuple = ()):
    """(unit context, LibCST def or class) for one definition of the file, at any depth (a method
    as well); raises Unsupported. Positions and code are the file's, through the context.
    `released`: stdlib functions (of `statement`) that let go of their statements as they are built
    (their lists keep None): the caller owns the stdlib tree and replaces those bodies."""
    ctx = AstUnitContext(settings, recorder, None, 0, source=source)
    # compact: the built tree keeps places, not stdlib nodes, so the caller may let go of the
    # definition's stdlib body (lazy_definitions releases a long one once it is built)
    converter = _DefinitionConverter(source, ctx, compact=True)
    converter.released = released
    if not source.starts_line(statement):
        raise Unsupported("a statement after `;`")
    converter.enter(statement, source.indentation(statement.lineno))
    return ctx, converter.compound(statement)


class _DefinitionConverter(Converter):
    """Also places compound statements and statement lines: a whole-model run reports at a `def`
    (a limit reached there), a loop or a statement (the work budget spent there), where LibCST's
    positions start at the keyword or the statement, as the stdlib's do."""

    released: tuple = ()

    def function(self, node):
        # a long function's stdlib statements go as they are built: the stdlib tree of a
        # 100,000-line forward (~250 MB) and its LibCST tree are never held whole at once
        outer = self.consume
        if any(node is function for function in self.released):
            self.consume = True
        try:
            return super().function(node)
        finally:
            self.consume = outer

    def compound(self, node):
        made = super().compound(node)
        self.origins[made] = self.origin(node)
        return made

    def if_(self, node):
        made = super().if_(node)
        self.origins[made] = node  # an `elif` too: built here, not by compound (a merge after it is placed)
        return made

    def line(self, group: list):
        made = super().line(group)  # a statement line spans its statements, not its comment
        first, last = group[0], group[-1]
        self.ctx.fixed[made] = packed_span(self.source.offset(first.lineno, first.col_offset),
                                           self.source.offset(last.end_lineno, last.end_col_offset))
        return made


def convert_module(settings, recorder, source: SourceText, tree: ast.Module):
    """(unit context, LibCST module) for the whole file; raises Unsupported."""
    ctx = AstUnitContext(settings, recorder, None, 0, source=source)
    body = Converter(source, ctx).statements(tree.body) if tree.body else []
    return ctx, M.Module(body=body)
