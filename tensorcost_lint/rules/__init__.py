"""Every rule, one module per family; the registry is the single list the engine runs."""

from __future__ import annotations

from .accumulation import IncompatibleAccumulation, MixedOperandDtypes, NarrowingAccumulation
from .base import Example, Rule, RuleContext, SiteResult
from .contraction_mismatch import EinsumContractMismatch, MatmulContractionMismatch
from .contraction_order import CostlyContractionOrder
from .cost_ledger import CostLedger, LatencyBudget
from .implicit_broadcast import ImplicitBatchBroadcast
from .internal_error import InternalError
from .materialization import IntermediateOverBudget, QuadraticMaterialization
from .shape_contracts import ShapeContradiction, ShapeParseError

ALL_RULES: tuple[Rule, ...] = (
    ShapeParseError(), ShapeContradiction(),
    MatmulContractionMismatch(), EinsumContractMismatch(),
    ImplicitBatchBroadcast(),
    NarrowingAccumulation(), IncompatibleAccumulation(), MixedOperandDtypes(),
    QuadraticMaterialization(), IntermediateOverBudget(), CostlyContractionOrder(),
    CostLedger(), LatencyBudget(),
    InternalError(),
)
RULES_BY_CODE = {rule.code: rule for rule in ALL_RULES}
DEFAULT_CODES = frozenset(rule.code for rule in ALL_RULES if rule.default_enabled)
RULE_FOR_FACT = {fact: rule for rule in ALL_RULES for fact in rule.facts}
INTERNAL_ERROR = RULES_BY_CODE["TCL900"]


def describe(fact, sizes: dict | None = None) -> str:
    """A fact in the words of the rule that owns it (costing's reason for a call that would raise)."""
    return RULE_FOR_FACT[type(fact)].message(fact, sizes or {})


def _matches(code: str, selectors) -> bool:
    return any(selector == "ALL" or code.startswith(selector) for selector in selectors)


def enabled_codes(select=(), extend_select=(), ignore=()) -> frozenset[str]:
    """ruff/flake8 semantics: `select` replaces the defaults, `extend_select` adds, `ignore` removes
    (the more specific of a select and an ignore wins)."""
    codes = set()
    for rule in ALL_RULES:
        chosen = _matches(rule.code, select) if select else rule.default_enabled
        chosen = chosen or _matches(rule.code, extend_select)
        if chosen and ignore:
            ignoring = [s for s in ignore if s == "ALL" or rule.code.startswith(s)]
            selecting = [s for s in (*select, *extend_select) if s == "ALL" or rule.code.startswith(s)]
            if ignoring and max(len(s) for s in ignoring) >= max((len(s) for s in selecting), default=0):
                chosen = False
        if chosen:
            codes.add(rule.code)
    return frozenset(codes)


__all__ = ["ALL_RULES", "RULES_BY_CODE", "DEFAULT_CODES", "RULE_FOR_FACT", "INTERNAL_ERROR", "describe", "enabled_codes", "Example", "Rule", "RuleContext", "SiteResult"]
