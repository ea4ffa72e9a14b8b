"""The result cache's config key is derived from ProjectConfig's fields: changing any field that can
change a finding changes the key; the fields left out are listed with the reason."""

from __future__ import annotations

from dataclasses import fields, replace
from decimal import Decimal

from estimator import ExecutionPolicy
from tensorcost_lint.config.work_limits import WorkLimits
from tensorcost_lint.config.project_config import NOT_IN_FINGERPRINT, Budgets, ProjectConfig, parse_config

CHANGED = {
    "dims": {"seq": 4096}, "cli_dims": {"seq": 8}, "sequence_dims": ("T",), "default_dtype": "bfloat16",
    "broadcast_policy": "strict", "budgets": Budgets(contraction_regret=Decimal(2)), "hardware_id": "a100-80gb",
    "traffic_boundary": "l2-to-compute", "torch_einsum": "opt-einsum", "select": ("TCL4",),
    "extend_select": ("TCL501",), "ignore": ("TCL201",), "execution": ExecutionPolicy(count=2),
    "per_file_ignores": (("tests/*", "/tmp", ("TCL401",)),), "causal_attention_flops": "dense",
    "source_roots": ("/opt/shared",), "site_packages": "auto", "site_folders": ("/opt/site-packages",),
    "work_budget": WorkLimits(steps=10),
    "models": parse_config({"models": {"gpt": {"entry": "model.py:GPT.forward", "inputs": {"idx": "int64 B T"}}}},
                           "test", None).models,
}


def test_every_field_is_in_the_key_or_left_out_with_a_reason():
    names = {item.name for item in fields(ProjectConfig)}
    assert set(NOT_IN_FINGERPRINT) <= names
    base = ProjectConfig()
    for name in names - set(NOT_IN_FINGERPRINT):
        assert name in CHANGED, f"give {name} a changed value here"
        assert replace(base, **{name: CHANGED[name]}).fingerprint() != base.fingerprint(), name


def test_left_out_fields_do_not_change_the_key():
    base = ProjectConfig()
    assert replace(base, exclude=("tests/*",), source="elsewhere.yaml", root="/tmp").fingerprint() == base.fingerprint()
