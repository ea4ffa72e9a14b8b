"""Source text that is valid Python but unusual where lines, comments and strings are concerned.

Python ends lines only at \\n, \\r\\n and \\r; `str.splitlines` also splits at \\v, \\f, \\x1c-\\x1e,
\\x85, \\u2028 and \\u2029. Form feeds between functions are common in older code (GNU style, parts
of CPython), and \\u2028 turns up in i18n strings. A pragma is a comment, never a string's text.
"""

from __future__ import annotations

import pytest

from tensorcost_lint.driver.engine import lint_source

from .hostile_files import GOOD, GOOD_FINDING
from .lint_checks import fuzz_config, python_accepts

CONFIG = fuzz_config(dims={"batch": 8, "seq": 8192, "d": 64}, sequence_dims=("seq",), extend_select=())
# Characters Python treats as ordinary in comments and strings (\v and \f also as whitespace) but
# str.splitlines treats as line ends.
SPLITLINES_ONLY = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def _codes(text: str):
    assert python_accepts(text)
    return [(f.line, f.column, f.code) for f in lint_source(text, "m.py", CONFIG).findings]


def test_the_reference_file():
    assert _codes(GOOD) == [GOOD_FINDING]


@pytest.mark.parametrize("where", ["comment", "string", "own line"])
def test_line_separators_python_does_not_split_at(where):
    # file_analysis.analyse_source slices units with text.splitlines(keepends=True); it should split
    # at \r\n, \r and \n only (as lsp_server.document_lines does).
    for character in SPLITLINES_ONLY:
        if where == "comment":
            text = GOOD.replace("from torch import Tensor", f"from torch import Tensor  # a{character}b")
        elif where == "string":
            text = GOOD.replace("from torch import Tensor", f"from torch import Tensor\ns = 'a{character}b'")
            text = text.replace("\n\n\ndef", "\n\ndef")  # keep the line numbers of GOOD
        else:
            if character != "\x0c":
                continue  # of these, Python accepts only a form feed on a line of its own
            text = GOOD.replace("\n\n\ndef", f"\n\n{character}\ndef")
        assert _codes(text) == [GOOD_FINDING], repr(character)


def test_noqa_after_a_form_feed():
    # engine.apply_noqa(findings, text.splitlines()): the same splitting as above, so the noqa on
    # line 7 is looked for on Python's line 6.
    text = GOOD.replace("\n\n\ndef", "\n\x0c\n\ndef").replace("-1)\n", "-1)  # noqa: TCL401\n")
    assert _codes(text) == []


def test_noqa_on_the_finding_line():
    assert _codes(GOOD.replace("-1)\n", "-1)  # noqa: TCL401\n")) == []


def test_a_pragma_inside_a_string_is_not_a_pragma():
    # file_analysis.read_pragmas searches every line for `# tensorcost:`, so a string or docstring
    # mentioning the syntax (documentation, code generators, this test suite) gives TCL001 or,
    # worse, silently changes sizes. Pragmas should come from comment tokens (tokenize/ast).
    text = GOOD.replace("from torch import Tensor", 'from torch import Tensor\nHELP = "# tensorcost: dims T=abc"') \
        .replace("\n\n\ndef", "\n\ndef")
    assert _codes(text) == [GOOD_FINDING]
    docstring = '"""Usage:\n\n# tensorcost: dims seq=2\n"""\n' + GOOD  # would shrink seq and hide TCL401
    assert [code for _, _, code in _codes(docstring)] == ["TCL401"]


def test_crlf_tabs_and_bom_in_memory():
    """The engine is also handed text directly (flake8's lines, the LSP's buffer)."""
    assert _codes(GOOD.replace("\n", "\r\n")) == [GOOD_FINDING]
    assert _codes(GOOD.replace("    ", "\t")) == [(7, 9, "TCL401")]
    # A BOM left in decoded text is not valid Python for compile(); flake8 strips it, and the
    # engine must at least not call it an internal error.
    codes = [f.code for f in lint_source("\ufeff" + GOOD, "m.py", CONFIG).findings]
    assert codes in (["TCL401"], ["E999"]), codes


def test_an_unpaired_surrogate_in_the_text():
    # The LSP hands us whatever the editor sent; a lone surrogate cannot be encoded to UTF-8.
    text = GOOD.replace("from torch import Tensor", "from torch import Tensor  # \ud800")
    # ast.parse raises UnicodeEncodeError (not SyntaxError), which lint_source reports as an
    # internal error. Python cannot compile such text: it is the file's problem, not ours.
    result = lint_source(text, "m.py", CONFIG)
    assert [f.code for f in result.findings] in (["E999"], ["E902"]), result.findings
