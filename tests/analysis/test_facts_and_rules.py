"""Analysis states facts; rules own the words. Every fact type of `analysis.problems` is put into
words by exactly one rule, and nothing below the rules floor names a rule code."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from tensorcost_lint.analysis import problems
from tensorcost_lint.baseline import compare
from tensorcost_lint.rules import ALL_RULES, RULE_FOR_FACT
from tensorcost_lint.whole_model.values import memory_facts, model_facts

from .test_import_layers import PACKAGE_FLOORS, _modules, _package_floor

# The floors that make facts (the settings' key documentation, which names the rules a key feeds, aside).
FACT_FLOORS = ("analysis", "costing", "whole-model run", "baseline documents")
BELOW_RULES = [path for name, path in sorted(_modules().items()) if name.startswith("tensorcost_lint")
               and _package_floor(name) in {list(PACKAGE_FLOORS).index(floor) for floor in FACT_FLOORS}]


def _fact_types():
    """Facts of the analysis, of the baseline comparison (TCL601 grows between two runs) and of
    whole-model runs (TCL503 budgets, TCL504 device memory, TCL602 growth)."""
    facts = {obj for _, obj in inspect.getmembers(problems, inspect.isclass)
             if obj.__module__ == problems.__name__ and obj not in (problems.ShapeProblem, problems.Reported)}
    return facts | {compare.SiteRegression, model_facts.ModelOverBudget, model_facts.ModelRegression,
                    memory_facts.ModelOverDeviceMemory}


def test_every_fact_type_belongs_to_exactly_one_rule():
    claimed = [fact for rule in ALL_RULES for fact in rule.facts]
    assert len(claimed) == len(set(claimed))
    assert set(claimed) == _fact_types()
    assert set(RULE_FOR_FACT) == _fact_types()


def test_no_rule_code_below_the_rules_floor():
    for path in BELOW_RULES:
        code = re.sub(r'"""[\s\S]*?"""|#[^\n]*', "", path.read_text())  # docstrings and comments aside
        assert not re.search(r"TCL\d{3}", code), path.name
