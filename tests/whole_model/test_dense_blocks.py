"""A subclass of nn.ModuleDict iterated by `self.items()` (its registered layers, by name, in
order), the names formatted printf-style (`"denselayer%d" % (i + 1)`): fixtures/styles/dense_blocks.py
held against FlopCounterMode. Before, `self.items()` was a call not followed and a name built with
`%` was unknown, so the block's children were."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import dense_blocks  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402
from tensorcost_lint.whole_model.python.string_format import MAX_FIELD, percent  # noqa: E402
from tensorcost_lint.analysis.facts import SequenceFact, StringFact  # noqa: E402
from tensorcost_lint.whole_model.values.library_objects import IntFact  # noqa: E402


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_dense_block_over_its_items_equals_flop_counter_mode(tmp_path, capsys, mode):
    record = model_record(tmp_path, capsys, {"B": 2}, f"{dense_blocks.__file__}:DenseNet.forward",
                          {"x": "float32 B 8 16 16"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(dense_blocks.DenseNet(), torch.randn(2, 8, 16, 16), training=mode == "training")
    assert record["complete"] is True, (record["not_followed"], record.get("unresolved_sites"))
    assert record["totals"]["flops"] == expected
    # the block's layers keep the names the code gave them
    assert {m["path"] for m in record["modules"]} >= {"block.denselayer1.conv", "block.denselayer3.conv"}


class _Run:
    sizes: dict = {}


@pytest.mark.parametrize("template, value, expected", [
    ("denselayer%d", IntFact(3), "denselayer3"),
    ("%s.%s", SequenceFact((StringFact("blocks"), IntFact(0))), "blocks.0"),
    ("%03d|%-4s|", SequenceFact((IntFact(7), StringFact("ab"))), "007|ab  |"),
    ("%d%%", IntFact(50), "50%"),
])
def test_printf_style_formatting_of_known_values_is_pythons(template, value, expected):
    assert percent(_Run(), StringFact(template), value) == StringFact(expected)


@pytest.mark.parametrize("template, value", [
    (f"%0{MAX_FIELD + 1}d", IntFact(1)),  # a width past the bound: never built
    ("%*d", SequenceFact((IntFact(5), IntFact(1)))),  # a width read from the arguments
    ("%d %d", IntFact(1)),  # Python raises: the run does not say what the string is
    ("%d", None),  # a value the run does not know
])
def test_what_cannot_be_formatted_safely_is_unknown(template, value):
    assert percent(_Run(), StringFact(template), value) is None
