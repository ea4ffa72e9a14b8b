"""Unit selection (analysis/units.py): the look at a unit's text that rejects most units before their
tree is walked must let through every unit the walk would select, whatever the layout."""

from __future__ import annotations

import ast
import textwrap
import time
from pathlib import Path

from tensorcost_lint.adapters.flake8_plugin import with_default_off_codes
from tensorcost_lint.analysis import units
from tensorcost_lint.analysis.units import select_units
from tensorcost_lint.config.project_config import parse_config
from tensorcost_lint.driver.engine import lint_source

ROOT = Path(__file__).resolve().parents[2]


def _findings(source: str):
    config = with_default_off_codes(parse_config({}, "test-config", None))
    result = lint_source(textwrap.dedent(source), "model.py", config)
    return [(f.line, f.column, f.code, f.message) for f in result.findings]


def test_a_shape_string_on_its_own_line_of_a_multi_line_annotation_is_read():
    findings = _findings('''\
        from jaxtyping import Float
        from torch import Tensor


        def f(
            x: Float[
                Tensor, "b *4"
            ],
        ):
            return x
        ''')
    assert findings == [(7, 20, "TCL001", "cannot parse shape annotation: a fixed axis cannot bind to multiple "
                                         "axes (`*4` is not allowed)")]


def test_a_comment_between_the_items_of_an_annotation_does_not_hide_it():
    findings = _findings('''\
        from jaxtyping import Float
        from torch import Tensor


        def f(x: Float[Tensor,  # batch first
                       "b *4"]):
            return x
        ''')
    assert [f[:3] for f in findings] == [(6, 19, "TCL001")]


def test_calls_of_a_convolution_attribute_are_sites_even_where_no_linear_is_built():
    findings = _findings('''\
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)

            def forward(self, x):
                return self.conv(x)
        ''')
    assert findings == [(10, 16, "TCL501", "cost of `self.conv(x)` unresolved: operand 0 has no known shape "
                                           "(annotate it or add a shape comment)")]


def test_a_linear_attribute_called_through_parentheses_is_a_site():
    findings = _findings('''\
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(3, 8)

            def forward(self, x):
                return (self).proj (x)
        ''')
    assert [f[:3] for f in findings] == [(10, 16, "TCL501")]


EDGE_UNITS = '''\
def first_item(x: Union["Slice", SliceInput]):
    return x


def later_line(x: Float[
        Tensor, "b s"
    ]):
    return x


def commented(x: Float[Tensor,  # batch first
                       "b s"]):
    return x


def forward_reference(x: "jaxtyping.Float[Tensor, 'b']"):
    return x


def annotated(x: (
        "Float[Tensor, 'b']")):
    return x


def torchtyping(x: TensorType ["b"]):
    return x


def continued(x: Float[Tensor, \\
                       "b"]):
    return x
'''


def test_every_unit_the_tree_walk_selects_passes_the_text_look():
    sources = [EDGE_UNITS] + [p.read_text() for p in sorted([*ROOT.glob("examples/*.py"),
                                                              *ROOT.glob("tests/fixtures/lint/*.py"),
                                                              *ROOT.glob("tests/adapters/models/*.py")])]
    walked_candidates = 0
    for text in sources:
        tree = ast.parse(text)
        source = units._Source(text.splitlines(), einops=True)
        for node in [n for s in tree.body for n in (s.body if isinstance(s, ast.ClassDef) else [s])]:
            if units._scan(node, source.site_names).candidate:
                walked_candidates += 1
                scan = source.scan(node)
                assert scan is not None and scan.candidate, ast.get_source_segment(text, node)
    assert walked_candidates > 30
    selection = select_units(ast.parse(EDGE_UNITS), EDGE_UNITS.splitlines())
    assert len(selection.units) == 7


def test_the_text_look_stays_linear_on_hostile_text():
    look = units._UNIT_TEXT[True]
    for text in ["," + "#" + "(" * 50_000 + "\n", "[" + " (" * 50_000 + "x", ",#" * 50_000,
                 ("," + " " * 3_000 + "x") * 50, ":" + " " * 100_000]:
        started = time.process_time()
        look.search(text)
        assert time.process_time() - started < 0.5
