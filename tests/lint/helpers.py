"""Lint a snippet the way users' files are linted: a config dict validated like tensorcost.yaml."""

from __future__ import annotations

import textwrap

from tensorcost_lint.config.project_config import parse_config
from tensorcost_lint.driver.engine import lint_source


def lint(source: str, config: dict | None = None, path: str = "model.py"):
    parsed = parse_config(config or {}, "test-config", None)
    return lint_source(textwrap.dedent(source), path, parsed)


def codes(source: str, config: dict | None = None) -> list[str]:
    return [f.code for f in lint(source, config).findings]


def lines(source: str, config: dict | None = None) -> list[str]:
    """`line:col CODE` for each finding (TorchFix's fixture format without the message)."""
    return [f"{f.line}:{f.column} {f.code}" for f in lint(source, config).findings]


def site_by_line(result, line: int):
    matches = [s for s in result.sites if s.site.line == line]
    assert len(matches) == 1, [(s.site.line, s.site.expression) for s in result.sites]
    return matches[0]


class _OneConfig:
    """A resolver that gives every path one config (what a snippet needs)."""

    def __init__(self, config) -> None:
        self.config = config

    def for_path(self, path):
        return self.config


def lint_with_baseline(source: str, config: dict | None, before: str, before_config: dict | None = None,
                       path: str = "model.py"):
    """Lint `source` with `check --baseline`, the baseline written from `before` (TCL601's examples)."""
    from tensorcost_lint.baseline.collect import collect
    from tensorcost_lint.baseline.document import current
    from tensorcost_lint.cost_gate.gate import gate
    from tensorcost_lint.driver.runner import Report

    source, before = textwrap.dedent(source), textwrap.dedent(before)
    then = _OneConfig(parse_config(before_config if before_config is not None else (config or {}), "test-config", None))
    earlier = Report(1, [lint_source(before, path, then.config)])
    collected = collect(earlier, then, {path: before})
    baseline = current({key: site.costs for key, site in collected.sites.items()}, collected.configs)
    now = _OneConfig(parse_config(config or {}, "test-config", None))
    report = Report(1, [lint_source(source, path, now.config)])
    comparison = gate(report, now, baseline, {path: source})
    return report.results[0], comparison


def lint_with_models(source: str, config: dict, before: str | None = None, before_config: dict | None = None):
    """`tensorcost check` on `source` saved as model.py beside a tensorcost.yaml holding `config`,
    with its `models:` run (TCL503); with `before`, against a baseline written from `before` and
    `before_config` as `tensorcost baseline` writes it (TCL602)."""
    import json
    import tempfile
    from pathlib import Path

    from tensorcost_lint.baseline.collect import collect
    from tensorcost_lint.baseline.document import current
    from tensorcost_lint.cost_gate.gate import gate
    from tensorcost_lint.cost_gate.model_gate import current_models
    from tensorcost_lint.config.config_discovery import ConfigResolver, Overrides
    from tensorcost_lint.driver.runner import lint_paths
    from tensorcost_lint.model_check.check_merge import merge, run_models

    def checked(directory: Path, text: str, settings: dict):
        (directory / "model.py").write_text(textwrap.dedent(text))
        (directory / "tensorcost.yaml").write_text(json.dumps(settings))  # JSON is YAML
        resolver = ConfigResolver(Overrides(config_file=str(directory / "tensorcost.yaml")))
        report = lint_paths([str(directory / "model.py")], resolver)
        report.models = merge(report, resolver, run_models(report, resolver))
        return report, resolver

    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        baseline = None
        if before is not None:
            report, resolver = checked(directory, before, before_config if before_config is not None else config)
            collected = collect(report, resolver)
            baseline = current({key: site.costs for key, site in collected.sites.items()}, collected.configs,
                               current_models(report, resolver)[0])
        report, resolver = checked(directory, source, config)
        if baseline is not None:
            gate(report, resolver, baseline)
        return report.results[0]
