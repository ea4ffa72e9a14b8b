"""source_parse.parse_source gives ast.parse's tree (positions included) and its SyntaxError, with a
file's long runs of one-line statements parsed apart: runs at a block's start, middle and end, at
the top level, in an elif/else/except, and runs that are not statements at all (inside a string,
brackets or a backslash continuation), each at several run and piece lengths."""

from __future__ import annotations

import ast

import pytest

from tensorcost_lint.analysis import source_parse
from tensorcost_lint.analysis.source_parse import parse_source

BODY = "".join(f"        h = self.lin(h{i})\n" for i in range(7))
TOP = BODY.replace("        ", "")
ONE = BODY.replace("        ", "    ")
CASES = {
    "forward": "class M:\n    def forward(self, x):\n        h = x\n" + BODY + "        return h\n",
    "block end": "class M:\n    def forward(self, x):\n" + BODY,
    "no final newline": "class M:\n    def forward(self, x):\n" + BODY.rstrip("\n"),
    "top level": "import a\n" + TOP + "y = 2\n",
    "two runs": "def f():\n" + ONE + "    if x:\n" + BODY + "    else:\n" + BODY + "    return 1\n",
    "elif": "if a:\n    pass\nelif b:\n" + ONE + "z = 1\n",
    "try": "try:\n" + ONE + "except E:\n" + ONE,
    "crlf": ("def f():\n" + BODY).replace("\n", "\r\n"),
    "semicolons and lambdas": "def f():\n" + BODY.replace("h = self.lin(h", "g = lambda: (1").replace("\n", "; y = 2\n"),
    "form feed": "def f():\n    x = 1 \x0c\n" + ONE,
    "inside a string": 'def f():\n    s = """\n' + BODY + '    """\n    return s\n',
    "inside brackets": "def f():\n    x = g(\n" + BODY.replace(" = ", "==").replace("\n", ",\n") + "    )\n",
    "after a continuation": "def f():\n    x = 1 + \\\n" + BODY,
    "unexpected indent": "    x = 1\n" + BODY,
    "syntax error in a run": "def f():\n" + BODY.replace("lin(h3)", "lin(h3"),
    "another syntax error": "def f():\n" + BODY.replace("lin(h3)", "= ="),
}


ERRORS = {"after a continuation", "unexpected indent", "syntax error in a run",
          "another syntax error"}


def test_the_cases_that_should_parse_do():
    assert {name for name, text in CASES.items() if type(_parsed(ast.parse, text)) is tuple} == ERRORS


def _parsed(parse, text):
    try:
        return ast.dump(parse(text), include_attributes=True)
    except SyntaxError as error:
        return type(error).__name__, error.msg, error.lineno, error.offset


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("min_run,piece", [(3, 1), (3, 2), (5, 3), (7, 100), (20, 5)])
def test_the_tree_and_errors_are_ast_parse_s(name, min_run, piece):
    text = CASES[name]
    assert _parsed(lambda t: parse_source(t, min_run=min_run, piece=piece), text) == _parsed(ast.parse, text)


def test_a_long_run_is_parsed_in_pieces(monkeypatch):
    """The runs are really parsed apart (the cases above would pass if every text fell back)."""
    pieces = []
    real = source_parse._run_statements
    monkeypatch.setattr(source_parse, "_run_statements", lambda *a: pieces.append(a[1:3]) or real(*a))
    text = CASES["two runs"]
    assert ast.dump(parse_source(text, min_run=3, piece=2), include_attributes=True) == \
        ast.dump(ast.parse(text), include_attributes=True)
    assert pieces == [(1, 7), (9, 15), (17, 23)][::-1]
