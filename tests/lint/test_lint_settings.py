"""One frozen settings object per lint: the engine resolves it from the config once, and costing,
rules, records and the editor's hover all read that one object."""

from __future__ import annotations

import dataclasses
from dataclasses import fields, replace

import pytest

from tensorcost_lint.driver import lint_settings as settings_module
from tensorcost_lint.adapters.cost_hover import hover_markdown
from tensorcost_lint.config.project_config import ProjectConfig
from tensorcost_lint.driver.engine import lint_source
from tensorcost_lint.driver.lint_settings import LintSettings, lint_settings

TWO_MATMULS = """import torch


def f(x: "Float[Tensor, 'b n d']", w: "Float[Tensor, 'd e']", v: "Float[Tensor, 'e d']"):
    h = x @ w
    return h @ v
"""
CONFIG = ProjectConfig(dims={"b": 2, "n": 128, "d": 64, "e": 256}, hardware_id="a100-80gb",
                       extend_select=("TCL501",), per_file_ignores=(("/", "skip_*.py", ("TCL501",)),))

# ProjectConfig fields a file's lint does not read as they are, and what it reads instead.
NOT_IN_SETTINGS = {
    "select": "`codes`", "extend_select": "`codes`", "ignore": "`codes`", "per_file_ignores": "`codes`",
    "exclude": "decides which files are linted", "root": "resolves paths while the config is read",
    "evidence_files": "their records are `devices`", "models": "whole models (`tensorcost model`), not one file",
    "source_roots": "which files a whole-model run may read, not one file's findings",
    "site_packages": "whether a whole-model run reads installed packages, not one file's findings",
    "site_folders": "the installed packages' folders site_packages opens to a whole-model run",
    "work_budget": "bounds a whole-model run, not one file's lint",
}


def test_settings_carry_config_names_and_nothing_is_forgotten():
    config_fields = {item.name for item in fields(ProjectConfig)}
    settings_fields = {item.name for item in fields(LintSettings)} - {"path", "codes"}
    assert settings_fields <= config_fields  # a setting means what the config key of its name means
    assert config_fields - settings_fields == set(NOT_IN_SETTINGS)


def test_the_engine_resolves_the_hardware_once_per_file_not_per_site(monkeypatch):
    calls = []
    real = settings_module.resolve_device

    def counting(*args):
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(settings_module, "resolve_device", counting)
    result = lint_source(TWO_MATMULS, "m.py", CONFIG)
    assert [s.cost.resolved for s in result.sites] == [True, True]
    assert calls == ["a100-80gb"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.settings.hardware_id = "h100-sxm"


def test_costing_rules_records_and_hover_read_the_same_settings():
    result = lint_source(TWO_MATMULS, "m.py", CONFIG)
    settings = result.settings
    assert settings == lint_settings(CONFIG, "m.py") and "TCL501" in settings.codes
    ledger = [f for f in result.findings if f.code == "TCL501"]
    assert len(ledger) == 2 and all(" on a100-80gb (" in f.message for f in ledger)
    assert [r["hardware"] for r in result.records()] == ["a100-80gb", "a100-80gb"]
    hover = hover_markdown(result.sites[0], settings, result.sizes, result.findings)
    assert "**Hardware evidence** `a100-80gb`" in hover and "`TCL501`" in hover
    assert all(s.cost.compute_evidence in settings.hardware.compute for s in result.sites)  # costed on it


def test_per_file_ignores_are_in_the_codes_of_that_file_only():
    skipped = lint_source(TWO_MATMULS, "/work/skip_me.py", CONFIG)
    assert "TCL501" not in skipped.settings.codes and not [f for f in skipped.findings if f.code == "TCL501"]
    assert lint_settings(replace(CONFIG, per_file_ignores=()), "/work/skip_me.py").codes == lint_settings(
        CONFIG, "m.py").codes
