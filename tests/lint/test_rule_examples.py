"""Every rule's own VALID and INVALID examples, as one parametrised test (Fixit's pattern): a rule
cannot land without examples that prove it fires and stays quiet."""

from __future__ import annotations

import pytest

from tensorcost_lint.rules import ALL_RULES

from .helpers import lint

CASES = [
    pytest.param(rule, kind, index, example, id=f"{rule.code}-{kind}-{index}")
    for rule in ALL_RULES
    for kind, examples in (("valid", rule.valid), ("invalid", rule.invalid))
    for index, example in enumerate(examples)
]


@pytest.mark.parametrize("rule,kind,index,example", CASES)
def test_rule_example(rule, kind, index, example):
    found = [f.code for f in lint(example.source, example.config).findings]
    if kind == "valid":
        assert rule.code not in found, found
    else:
        for code in example.expect or (rule.code,):
            assert code in found, (code, found)


def test_every_rule_but_the_ledger_and_internal_error_has_both_kinds_of_example():
    for rule in ALL_RULES:
        if rule.code in ("TCL900",):
            continue
        assert rule.invalid, rule.code
        if rule.code != "TCL501":
            assert rule.valid, rule.code


def test_every_rule_page_has_the_four_headings():
    from tensorcost_lint.rules.docs import rule_page

    for rule in ALL_RULES:
        page = rule_page(rule.code)
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
            assert heading in page, (rule.code, heading)
        assert rule.name and rule.name == rule.name.lower() and " " not in rule.name
