"""Every rule, one module per family; the registry is the single list the engine runs."""

from __future__ import annotations

from .accumulation import IncompatibleAccumulation, MixedOperandDtypes, NarrowingAccumulation
from .base import Example, Rule, RuleContext, SiteResult
from .contraction_mismatch import EinsumContractMismatch, MatmulContractionMismatch
from .contraction_order import CostlyContractionOrder
from .cost_ledger import CostLedger, LatencyBudget
from .cost_regression import CostRegression
from .device_memory import DeviceMemory
from .model_regression import ModelCostRegression
from .implicit_broadcast import ImplicitBatchBroadcast
from .internal_error import InternalError
from .model_budgets import ModelBudget
from .materialization import IntermediateOverBudget, QuadraticMaterialization
from .shape_contracts import ShapeContradiction, ShapeParseError
from .too_large import TooLargeToCost

ALL_RULES: tuple[Rule, ...] = (
    ShapeParseError(), ShapeContradiction(),
    MatmulContractionMismatch(), EinsumContractMismatch(),
    ImplicitBatchBroadcast(),
    NarrowingAccumulation(), IncompatibleAccumulation(), MixedOperandDtypes(),
    QuadraticMaterialization(), IntermediateOverBudget(), CostlyContractionOrder(), TooLargeToCost(),
    CostLedger(), LatencyBudget(), ModelBudget(), DeviceMemory(),
    CostRegression(), ModelCostRegression(),
    InternalError(),
)
RULES_BY_CODE = {rule.code: rule for rule in ALL_RULES}
DEFAULT_CODES = frozenset(rule.code for rule in ALL_RULES if rule.default_enabled)
RULE_FOR_FACT = {fact: rule for rule in ALL_RULES for fact in rule.facts}
INTERNAL_ERROR = RULES_BY_CODE["TCL900"]


def describe(fact, sizes: dict | None = None) -> str:
    """A fact in the words of the rule that owns it (costing's reason for a call that would raise)."""
    return RULE_FOR_FACT[type(fact)].message(fact, sizes or {})


__all__ = ["ALL_RULES", "RULES_BY_CODE", "DEFAULT_CODES", "RULE_FOR_FACT", "INTERNAL_ERROR", "describe", "Example", "Rule",
           "RuleContext", "SiteResult"]
