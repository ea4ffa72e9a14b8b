"""The settings one lint of one file reads, resolved once by the engine from the project config
(CLI, flake8 and editor overrides already applied to it).

Costing, rules, the editor's hover and the site records all read this one frozen object, so none of
them re-derives a setting from `ProjectConfig` on its own: the enabled codes are worked out once per
file (per-file ignores included), and the hardware evidence is resolved once per file, not once per
costed site. The attribute names are `ProjectConfig`'s, so what a setting means never changes with
the object that carries it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from estimator import ExecutionPolicy, HardwareEvidence

from ..hardware.evidence_files import resolve_device
from ..rules.selection import enabled_codes


@dataclass(frozen=True)
class LintSettings:
    path: str
    codes: frozenset  # the rule codes reported for this file
    dims: Mapping  # config `dims`; a file's pragmas come above them, `cli_dims` above those
    cli_dims: Mapping
    sequence_dims: tuple
    default_dtype: str
    broadcast_policy: str
    hardware_id: str
    traffic_boundary: str
    execution: ExecutionPolicy
    torch_einsum: str
    budgets: object  # project_config.Budgets
    causal_attention_flops: str
    source: str  # the config file, for the message of an unknown hardware id
    devices: Mapping  # id -> HardwareEvidence from the config's evidence files

    @cached_property
    def hardware(self) -> HardwareEvidence:
        # Resolved on first use, as the config's own property was: an id the config check let
        # through but no evidence knows still fails inside costing (TCL900), never out of the engine.
        return resolve_device(self.hardware_id, self.devices, self.source, "hardware")


def lint_settings(config, path: str) -> LintSettings:
    """The settings of `config` (a `ProjectConfig`) for the file at `path`."""
    return LintSettings(
        path=path,
        codes=enabled_codes(config.select, config.extend_select, config.ignore_for(path)),
        dims=dict(config.dims),  # copies: a result (and its settings) travels back from --jobs workers
        cli_dims=dict(config.cli_dims),
        sequence_dims=tuple(config.sequence_dims),
        default_dtype=config.default_dtype,
        broadcast_policy=config.broadcast_policy,
        hardware_id=config.hardware_id,
        traffic_boundary=config.traffic_boundary,
        execution=config.execution,
        torch_einsum=config.torch_einsum,
        budgets=config.budgets,
        causal_attention_flops=config.causal_attention_flops,
        source=config.source,
        devices=dict(config.devices),
    )
