"""Project configuration (Contract 2): the checked, frozen ProjectConfig and its validation.

One document (a `tensorcost.yaml`, or the `[tool.tensorcost]` table of a `pyproject.toml`: the same
keys in both forms) becomes one ProjectConfig; unknown keys, wrong types and non-positive sizes are
refused with file, key and reason. Finding the file for a path, loading it and applying the CLI's
overrides is config_discovery.py.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from functools import cached_property
from decimal import Decimal
from pathlib import Path

from estimator import LIVENESS_POLICIES, EstimatorError, ExecutionPolicy, HardwareEvidence, normalize_dtype

from ..hardware.evidence_files import load_evidence_file, resolve_device
from ..rules.selection import check_selectors
from .byte_sizes import parse_byte_size
from .fields import MappingReader, key_path
from .per_file_ignores import codes_ignored_for
from .model_entries import CAUSAL_ATTENTION_FLOPS, parse_models
from .site_packages import parse_site_packages
from ..safe_io.confinement import Confinement, OutsideProject, repository_root
from .work_limits import WorkLimits, parse_work_limits

CONFIG_FILENAMES = ("tensorcost.yaml", "pyproject.toml")
TORCH_EINSUM_MODELS = ("left-to-right", "opt-einsum")
BROADCAST_POLICIES = ("shared-weights", "strict")
# A regret above a trillion never fires on a real einsum; a latency budget below a picosecond or
# above a year is a typo, not a budget (and either extreme makes exact arithmetic or messages huge).
MAX_CONTRACTION_REGRET = Decimal(10**12)
MIN_LATENCY_SECONDS = Decimal("1e-12")
MAX_LATENCY_SECONDS = Decimal(365 * 24 * 3600)


@dataclass(frozen=True)
class Budgets:
    quadratic_bytes: int = 256 * 2**20
    intermediate_bytes: int = 16 * 2**30
    contraction_regret: Decimal = Decimal(4)
    latency_seconds: Decimal | None = None
    regression: Decimal = Decimal(0)  # TCL601 with --baseline: allowed growth as a fraction (5% -> 0.05)


# ProjectConfig fields that cannot change a file's findings, so stay out of its cache key
NOT_IN_FINGERPRINT = {
    "exclude": "decides which files are checked, not what a checked file reports",
    "source": "where the config was read, for messages only",
    "root": "resolves relative paths, whose effect is in the fields they fill",
    "evidence_files": "their records enter the key as `hardware`",
    "devices": "their records enter the key as `hardware`",
}


@dataclass(frozen=True)
class ProjectConfig:
    dims: dict = field(default_factory=dict)
    cli_dims: dict = field(default_factory=dict)  # --dim: above pragmas, which are above `dims`
    sequence_dims: tuple[str, ...] = ("seq", "T", "query_pos", "key_pos")
    default_dtype: str = "float32"
    broadcast_policy: str = "shared-weights"
    budgets: Budgets = Budgets()
    hardware_id: str = "h100-sxm"
    evidence_files: tuple[str, ...] = ()
    traffic_boundary: str = "hbm-to-compute"
    execution: ExecutionPolicy = ExecutionPolicy()
    torch_einsum: str = "left-to-right"
    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()  # `ignore` and `extend_ignore` together
    per_file_ignores: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (base directory, glob, codes)
    exclude: tuple[str, ...] = ()  # `exclude` and `extend_exclude` together
    source: str = "(defaults)"  # the file this came from, for messages
    root: str | None = None  # directory of the config file: relative paths resolve from here
    devices: dict = field(default_factory=dict, compare=False)  # id -> HardwareEvidence (user files)
    models: tuple = field(default=(), compare=False)  # model_entries.ModelEntry (Contract 7)
    causal_attention_flops: str = "unmasked"  # or "dense": the full score square (Contract 7)
    source_roots: tuple[str, ...] = ()  # directories outside the project root that a run may read
    # Contract 7a: `site_packages` as written (auto | PATH | none) and the site folders it means:
    # imports are followed into their packages' source, read as text
    site_packages: str = "none"
    site_folders: tuple[str, ...] = ()
    work_budget: WorkLimits = WorkLimits()  # how much one whole-model run may do (work_limits.py)

    @cached_property
    def confinement(self) -> Confinement:
        """What a run may read: the repository holding the config (the working directory's when
        there is no config file), `source_roots` and, opted in by `site_packages`, the site folders."""
        return project_confinement(self.root, self.source_roots + self.site_folders)

    @property
    def hardware(self) -> HardwareEvidence:
        return resolve_device(self.hardware_id, self.devices, self.source, "hardware")

    def ignore_for(self, path: str) -> tuple[str, ...]:
        """`ignore` plus the per-file ignores whose glob matches `path`."""
        return self.ignore + codes_ignored_for(path, self.per_file_ignores)

    @cached_property
    def fingerprint_text(self) -> str:
        return self.fingerprint()

    def fingerprint(self) -> str:
        """Every field that can change a finding, as text (for the result cache key): derived from the
        fields, so a field added later is in the key unless NOT_IN_FINGERPRINT says why not."""
        parts = []
        for item in fields(self):
            if item.name in NOT_IN_FINGERPRINT:
                continue
            value = getattr(self, item.name)
            parts.append(f"{item.name}={sorted(value.items())!r}" if isinstance(value, dict) else f"{item.name}={value!r}")
        parts.append(f"hardware={self.hardware!r}")  # the evidence records themselves, wherever they came from
        return "\n".join(parts)


def _code_list(reader: MappingReader, key: str, values: list) -> tuple[str, ...]:
    for index, value in enumerate(values):
        if not isinstance(value, str) or not value.strip() or not value.strip().isalnum():
            raise reader.error(f"{key}[{index}]", f"expected a rule code or prefix like TCL4, got {value!r}")
    return check_selectors(reader.source, key_path(reader.prefix, reader.spelling(key)), values)


def _codes(reader: MappingReader, key: str) -> tuple[str, ...]:
    return _code_list(reader, key, reader.sequence(key))


def _per_file_ignores(reader: MappingReader, root: Path | None) -> tuple:
    table = reader.mapping("per_file_ignores")
    if table is None:
        return ()
    base = str(root) if root is not None else os.getcwd()
    entries = []
    for pattern in list(table.value):
        if not pattern.strip():
            raise table.error(pattern, "expected a glob pattern")
        codes = table.value[pattern]  # a glob is no key name: never read in its kebab spelling
        if isinstance(codes, str):  # `"tests/*" = "TCL401,TCL402"` as flake8 users write it
            codes = [c for c in codes.split(",") if c.strip()]
        if not isinstance(codes, list):
            raise table.error(pattern, f"expected a list of rule codes, got {type(codes).__name__}")
        entries.append((base, pattern, _code_list(table, pattern, codes)))
    return tuple(entries)


def _globs(reader: MappingReader, key: str) -> tuple[str, ...]:
    patterns = reader.sequence(key)
    for index, pattern in enumerate(patterns):
        if not isinstance(pattern, str) or not pattern.strip():
            raise reader.error(f"{key}[{index}]", f"expected a glob pattern, got {pattern!r}")
    return tuple(patterns)


def _dims(reader: MappingReader) -> dict[str, int]:
    dims_reader = reader.mapping("dims")
    if dims_reader is None:
        return {}
    dims = {}
    for name in list(dims_reader.value):
        if not name.isidentifier():
            raise dims_reader.error(name, "a dim name must be an identifier")
        dims[name] = dims_reader.integer(name, required=True)
    dims_reader.finish()
    return dims


def _percentage(reader: MappingReader, key: str) -> Decimal:
    """`5%`, `0%`, `12.5%` as an exact fraction; anything else is refused (a bare 5 could mean 5x)."""
    raw = reader.raw(key)
    text = raw.strip() if isinstance(raw, str) else None
    if not text or not text.endswith("%") or not re.fullmatch(r"[0-9]{1,6}(\.[0-9]{1,6})?", text[:-1].strip()):
        raise reader.error(key, f"expected a percentage like 5% (0% to 999999%), got {_shown(raw)}")
    return Decimal(text[:-1].strip()) / 100


def _shown(raw) -> str:
    text = repr(raw)
    return text if len(text) <= 40 else text[:37] + "..."


def _budgets(reader: MappingReader) -> Budgets:
    budgets_reader = reader.mapping("budgets")
    if budgets_reader is None:
        return Budgets()
    values = {}
    for key in ("quadratic_bytes", "intermediate_bytes"):
        if budgets_reader.has(key):
            try:
                values[key] = parse_byte_size(budgets_reader.raw(key))
            except ValueError as error:
                raise budgets_reader.error(key, str(error)) from None
    if budgets_reader.has("contraction_regret"):
        values["contraction_regret"] = budgets_reader.check_number(
            "contraction_regret", budgets_reader.raw("contraction_regret"), maximum=MAX_CONTRACTION_REGRET)
        if values["contraction_regret"] < 1:
            raise budgets_reader.error("contraction_regret", "must be at least 1 (a ratio to the optimum)")
    if budgets_reader.has("latency_seconds"):
        raw = budgets_reader.raw("latency_seconds")
        values["latency_seconds"] = None if raw is None else budgets_reader.check_number(
            "latency_seconds", raw, minimum=MIN_LATENCY_SECONDS, maximum=MAX_LATENCY_SECONDS)
    if budgets_reader.has("regression"):
        values["regression"] = _percentage(budgets_reader, "regression")
    budgets_reader.finish()
    return Budgets(**values)


def _execution(reader: MappingReader) -> ExecutionPolicy:
    execution_reader = reader.mapping("execution")
    if execution_reader is None:
        return ExecutionPolicy()
    count = execution_reader.integer("count", 1)
    liveness = execution_reader.choice("liveness", LIVENESS_POLICIES, "serial-reuse")
    default_copies = {"serial-reuse": 1, "not-retained": 0, "all-executions-live": count}[liveness]
    copies = execution_reader.integer("retained_copies", default_copies, minimum=0)
    execution_reader.finish()
    try:
        return ExecutionPolicy(count, liveness, copies)
    except EstimatorError as error:
        raise execution_reader.error(error.field.rpartition(".")[2], f"{error.trap}: {error.reason}") from None


def parse_config(document: object, source: str, root: Path | None) -> ProjectConfig:
    """Validate one config mapping (the YAML document or the `[tool.tensorcost]` table)."""
    if document is None:
        document = {}
    reader = MappingReader(document, source)
    dims = _dims(reader)
    sequence_dims = reader.sequence("sequence_dims") if reader.has("sequence_dims") else None
    if sequence_dims is not None:
        for index, name in enumerate(sequence_dims):
            if not isinstance(name, str) or not name.isidentifier():
                raise reader.error(f"sequence_dims[{index}]", f"expected a dim name, got {name!r}")
    default_dtype = reader.text("default_dtype", "float32")
    try:
        default_dtype = normalize_dtype(default_dtype, "default_dtype").name
    except EstimatorError as error:
        raise reader.error("default_dtype", error.reason) from None
    broadcast_policy = reader.choice("broadcast_policy", BROADCAST_POLICIES, "shared-weights")
    budgets = _budgets(reader)
    hardware_id = reader.text("hardware", "h100-sxm")
    source_roots = _source_roots(reader, root)
    site_packages, site_folders = parse_site_packages(reader, root)
    confinement = project_confinement(str(root) if root is not None else None, source_roots + site_folders)
    evidence_files = []
    devices: dict[str, HardwareEvidence] = {}
    for index, entry in enumerate(reader.sequence("evidence")):
        if not isinstance(entry, str) or not entry.strip():
            raise reader.error(f"evidence[{index}]", f"expected a file path, got {entry!r}")
        path = Path(entry)
        if not path.is_absolute() and root is not None:
            path = root / path  # relative to the config file, never to the working directory
        try:
            confinement.check(path, entry)
        except OutsideProject as error:
            raise reader.error(f"evidence[{index}]", str(error)) from None
        devices.update(load_evidence_file(path, str(path)))
        evidence_files.append(str(path))
    traffic_boundary = reader.text("traffic_boundary", "hbm-to-compute")
    execution = _execution(reader)
    frameworks = reader.mapping("frameworks")
    torch_einsum = "left-to-right"
    if frameworks is not None:
        torch_einsum = frameworks.choice("torch_einsum", TORCH_EINSUM_MODELS, "left-to-right")
        frameworks.finish()
    exclude = _globs(reader, "exclude") + _globs(reader, "extend_exclude")
    models = parse_models(reader, root, confinement)
    causal_attention_flops = reader.choice("causal_attention_flops", CAUSAL_ATTENTION_FLOPS, "unmasked")
    config = ProjectConfig(
        dims=dims,
        sequence_dims=tuple(sequence_dims) if sequence_dims is not None else ProjectConfig.sequence_dims,
        default_dtype=default_dtype,
        broadcast_policy=broadcast_policy,
        budgets=budgets,
        hardware_id=hardware_id,
        evidence_files=tuple(evidence_files),
        traffic_boundary=traffic_boundary,
        execution=execution,
        torch_einsum=torch_einsum,
        select=_codes(reader, "select"),
        extend_select=_codes(reader, "extend_select"),
        ignore=_codes(reader, "ignore") + _codes(reader, "extend_ignore"),
        per_file_ignores=_per_file_ignores(reader, root),
        exclude=exclude,
        source=source,
        root=str(root) if root is not None else None,
        devices=devices,
        models=models,
        causal_attention_flops=causal_attention_flops,
        source_roots=source_roots,
        site_packages=site_packages,
        site_folders=site_folders,
        work_budget=parse_work_limits(reader),
    )
    reader.finish()
    config.hardware  # an unknown hardware id is a config error now, not a finding later
    return config


def _source_roots(reader: MappingReader, root: Path | None) -> tuple[str, ...]:
    """`source_roots: [../shared]`: directories a run may read besides the project root, relative
    to the config file; each must be an existing directory."""
    roots = []
    for index, entry in enumerate(reader.sequence("source_roots")):
        if not isinstance(entry, str) or not entry.strip():
            raise reader.error(f"source_roots[{index}]", "expected a directory path")
        path = Path(entry)
        if not path.is_absolute() and root is not None:
            path = root / path
        if not path.is_dir():
            raise reader.error(f"source_roots[{index}]", f"{entry}: not a directory")
        roots.append(os.path.realpath(path))
    return tuple(roots)


def project_confinement(root: str | None, source_roots=()) -> Confinement:
    return Confinement.of(repository_root(root if root is not None else os.getcwd()), *source_roots)


