"""The stdlib-ast front end (analysis/ast_front.py, used by the flake8 plugin) against LibCST's parser:
the same trees as the analysis reads them, the same positions and source text for every node, and
the same findings, fixes and site records for every fixture, example and rule example."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from tensorcost_lint.adapters.flake8_plugin import with_default_off_codes
from tensorcost_lint.analysis import file_analysis
from tensorcost_lint.analysis.ast_front import convert_unit
from tensorcost_lint.analysis.ast_positions import CHILD_FIELDS, SourceText, Unsupported
from tensorcost_lint.analysis.context import FileSettings, Recorder
from tensorcost_lint.analysis.imports import ImportTable
from tensorcost_lint.config.config_discovery import ConfigResolver, Overrides
from tensorcost_lint.config.project_config import parse_config
from tensorcost_lint.driver.engine import lint_source
from tensorcost_lint.rules import ALL_RULES
from tensorcost_lint.safe_io.source_lines import source_lines

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*ROOT.glob("examples/*.py"), *ROOT.glob("tests/adapters/models/*.py"),
                  *ROOT.glob("tests/fixtures/lint/*.py")])

# Forms whose LibCST shape differs from the stdlib tree's: parentheses (owned by the node, by a
# call, by a tuple), comments inside them, `;`, `elif` against `else: if`, one-line bodies, string
# concatenation, non-ASCII columns, f-strings, star arguments mixed with keywords, walrus, lambda.
EDGE_CASES = '''\
import torch
from torch import nn
import torch.nn.functional as F


def forward(q: "Float[Tensor, 'b h s d']", k, v, *args, scale: float = 1.0, **kw) -> None:
    """Docstring with a (parenthesis) and # hash."""
    a = ((q @ k.transpose(-2, -1)))  # [b, h, s, s]
    b = (  # a comment inside the parentheses
        q  @  k.transpose(-2, -1)
    )
    c = torch.matmul((q), (k)); d = torch.matmul(q, k)  # (B, T)
    e = F.linear(*args, weight=v, **kw)
    g = "ab" "cd" 'ef'
    h = ("x"
         "y")
    é = q @ k  # ünïcode [b, s]
    if q is None: return
    if a:
        pass
    elif b:
        x = [i @ k for i in (q, v) if i is not None]
    else:
        if c:
            y = {n: m @ k for n, m in kw.items()}
    while (z := q @ k) is None:
        break
    f = lambda t, u=q @ k: t @ u
    w = f"{q @ k!r:>{scale}}"
    message = (f"shape {q.shape}" ' and '
               f"{k!r:>{scale}}" "")
    for i, (j, kk) in enumerate(zip(q, k)):
        continue
    with torch.autocast("cuda", dtype=torch.bfloat16) as ctx, torch.no_grad():
        m = torch.einsum("bhsd,bhtd->bhst", q, k)
    try:
        n = q[..., None, :, 1:-1, ::2] @ k[:, (0, 1)]
    except (ValueError, TypeError) as error:
        raise RuntimeError("bad") from error
    finally:
        del a, b
    q @= k
    q += -k if a else +k
    assert not (q @ k), "msg"
    return {**kw, "a": -1, "b": {1, 2}}, [*args], (q, *args), q[1, 2], q[(1, 2)], q[q @ k]


class Block(nn.Module):
    scale = 2

    def __init__(self, d: int) -> None:
        super().__init__(); self.proj = nn.Linear(d, 4 * d)

    @staticmethod
    async def step(x, y=(1, 2)):
        global SCALE
        return await x(torch.bmm(x, y)), (yield x @ y), [(yield from y)]
'''


def _settings(path: str = "model.py") -> FileSettings:
    return FileSettings(path=path, imports=ImportTable(), sizes={}, default_dtype="float32", strict_broadcast=False,
                        sequence_dims=())


def _units(tree: ast.Module):
    """Every top-level statement, and each method of each class on its own (the analysis's units)."""
    for statement in tree.body:
        yield statement
        if isinstance(statement, ast.ClassDef):
            yield from (s for s in statement.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))


_SKIPPED_FIELDS = {"lpar", "rpar", "leading_lines", "header", "footer", "indent", "lines_after_decorators", "comma",
                   "equal", "semicolon", "colon", "first_colon", "second_colon", "lbracket", "rbracket", "lbrace",
                   "rbrace", "newline", "whitespace", "dot", "default_indent", "default_newline", "encoding",
                   "has_trailing_newline", "posonly_ind"}


def _pairs(made, parsed, path="unit"):
    """(made node, parsed node) down both trees, asserting the same classes and the same values in
    every field the analysis can read (spaces and punctuation aside)."""
    assert type(made) is type(parsed), (path, type(made).__name__, type(parsed).__name__)
    yield made, parsed
    for name in parsed.__dataclass_fields__:
        if name in _SKIPPED_FIELDS or name.startswith("whitespace"):
            continue
        a, b = getattr(made, name), getattr(parsed, name)
        where = f"{path}.{type(parsed).__name__}.{name}"
        if isinstance(b, cst.CSTNode) and type(b).__name__ != "TrailingWhitespace":
            yield from _pairs(a, b, where)
        elif type(b).__name__ == "TrailingWhitespace":
            assert (a.comment and a.comment.value) == (b.comment and b.comment.value), where
            if b.comment:
                yield a.comment, b.comment
        elif isinstance(b, (list, tuple)) and b and isinstance(b[0], cst.CSTNode):
            assert len(a) == len(b), where
            for index, (x, y) in enumerate(zip(a, b)):
                yield from _pairs(x, y, f"{where}[{index}]")
        elif isinstance(b, (str, int)) or b is None:
            assert a == b or (name == "star" and not a and not b), (where, a, b)
        elif isinstance(b, cst.MaybeSentinel):
            assert a is b or isinstance(a, cst.MaybeSentinel), where


def _compare_source(text: str, unsupported: list | None = None):
    tree = ast.parse(text)
    lines = source_lines(text, keepends=True)
    source = SourceText(text, lines)
    compared = 0
    for statement in _units(tree):
        first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", [])])
        recorder = Recorder()
        try:
            made_ctx, made = file_analysis.convert_unit(_settings(), recorder, source, statement,
                                                        file_analysis._unit_offset(lines, first))
        except Unsupported as reason:
            if unsupported is not None:
                unsupported.append((statement.lineno, str(reason)))
            continue
        parsed_ctx, parsed = file_analysis._parse_unit(_settings(), recorder, lines, first, statement.end_lineno)
        assert made_ctx.line_offset == parsed_ctx.line_offset
        if isinstance(parsed, cst.SimpleStatementLine):
            made = made  # both are the statement's line
        positions = MetadataWrapper(parsed_ctx.module, unsafe_skip_copy=True).resolve(PositionProvider)
        for a, b in _pairs(made, parsed):
            if a in made_ctx.origins or a in made_ctx.fixed:
                assert made_ctx.position(a) == parsed_ctx.position(b), (text.splitlines()[statement.lineno - 1],
                                                                       type(b).__name__, parsed_ctx.code(b))
                assert b in positions
                if isinstance(b, cst.BaseExpression):
                    assert made_ctx.node_code(a) == parsed_ctx.node_code(b), type(b).__name__
                    assert made_ctx.code(a) == parsed_ctx.code(b)
                    if not (isinstance(b, cst.Tuple) and not b.elements):  # `()` bare is no tuple to LibCST
                        assert made_ctx.bare_code(a) == parsed_ctx.bare_code(b)
                compared += 1
            assert made_ctx.children(a) is not None
            if type(a) in CHILD_FIELDS:  # the walk descends the same nodes in the same order
                assert [type(c) for c in made_ctx.children(a)] == [
                    type(c) for c in b.children if type(c) in CHILD_FIELDS or isinstance(c, cst.BaseExpression)
                    and not isinstance(c, (cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp))
                ] or _only_operators_differ(made_ctx.children(a), b.children), type(a).__name__
    return compared


def _only_operators_differ(made_children, parsed_children) -> bool:
    keep = lambda nodes: [type(n) for n in nodes if type(n) in CHILD_FIELDS]  # noqa: E731
    return keep(made_children) == keep(parsed_children)


@pytest.mark.parametrize("path", SOURCES, ids=[p.name for p in SOURCES])
def test_built_trees_match_libcsts_with_the_same_positions_and_code(path):
    assert _compare_source(path.read_text()) > 0


def test_built_trees_match_libcsts_on_forms_that_differ_in_the_two_trees():
    unsupported = []
    assert _compare_source(EDGE_CASES, unsupported) > 300
    assert unsupported == []


def test_what_it_does_not_build_goes_to_libcsts_parser():
    source = "def f(x):\n    match x:\n        case 1:\n            return x @ x\n"
    tree = ast.parse(source)
    with pytest.raises(Unsupported):
        convert_unit(_settings(), Recorder(), SourceText(source, source_lines(source, keepends=True)), tree.body[0], 0)
    text = "import torch\n\n" + source.replace("x @ x", "torch.matmul(x, x)  # [B, T]") + "    y = f'{x}' 'z'\n"
    _assert_same_findings(text, "model.py", parse_config({}, "test", None))


def _findings(text, path, config, front_end):
    result = lint_source(text, path, config, noqa=False, tree=ast.parse(text), front_end=front_end)
    return [(f, f.fix) for f in result.findings], result.records()


def _assert_same_findings(text, path, config) -> int:
    config = with_default_off_codes(config)  # the ledger too: one finding per site, with its code
    ast_side = _findings(text, path, config, "ast")
    assert ast_side == _findings(text, path, config, "libcst")
    return len(ast_side[0])


def test_every_fixture_and_example_gives_the_same_findings_fixes_and_sites():
    resolver = ConfigResolver(Overrides())
    total = 0
    for path in SOURCES:
        total += _assert_same_findings(path.read_text(), str(path), resolver.for_path(str(path)))
    total += _assert_same_findings(EDGE_CASES, "model.py", parse_config({"dims": {"b": 2, "h": 4, "s": 512, "d": 64}},
                                                                         "test", None))
    assert total > 100


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_every_rule_example_gives_the_same_findings(rule):
    for example in [*rule.valid, *rule.invalid]:
        text = textwrap.dedent(example.source)
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        _assert_same_findings(text, "model.py", parse_config(example.config or {}, "test-config", None))


def test_code_nested_past_the_recursion_limit_gives_the_same_finding_on_both_paths():
    text = "import torch\n\n\ndef f(a, b):\n    return torch.matmul(a, b) + " + " + ".join(["a"] * 900) + "\n"
    config = parse_config({}, "test", None)
    assert _assert_same_findings(text, "model.py", config) == 1
    assert [f.code for f in lint_source(text, "model.py", config, tree=ast.parse(text), front_end="ast").findings] == [
        "TCL900"]
