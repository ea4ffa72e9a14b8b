"""The resolved sites of a lint report, each under its stable identity with its exact costs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from decimal import Decimal

from ..safe_io.files import UnreadableFile, read_source
from .document import SiteCosts
from .identity import Scopes, keyed, relative_path


@dataclass(frozen=True)
class CurrentSite:
    path: str  # as linted (the report's spelling), for findings
    line: int
    column: int
    site_id: int  # the report-wide site id, as in `--format json`
    costs: SiteCosts


def _costs(record: dict) -> SiteCosts:
    exact = record.get("lower_bound_seconds_exact")
    return SiteCosts(record["flops"], record["output_bytes"], record["traffic_bytes"],
                     None if exact is None else Decimal(exact))


@dataclass
class Collected:
    sites: dict  # SiteKey -> CurrentSite
    configs: list  # the configs of the files checked (their cost fingerprint goes in the baseline)
    checked: set  # the config-relative paths of the files checked, resolved sites or not
    roots: set  # the directories those paths are relative to

    def in_scope(self, path: str) -> bool:
        """Whether a baseline site's file was looked at by this run: checked, or no longer there. A
        run over some files (pre-commit passes the changed ones) says nothing about the others."""
        return path in self.checked or not any(os.path.exists(os.path.join(root, path)) for root in self.roots)


def collect(report, resolver, texts: dict | None = None) -> Collected:
    """Every resolved site under its identity, from cached and fresh results alike (both carry exact
    numbers). A file is read again (only when it has resolved sites) to find qualified names; `texts`
    supplies text that is not on disk (stdin)."""
    by_path: dict = {}
    configs = {}
    checked, roots = set(), set()
    for number, path, record in report.numbered_records():
        if record["resolved"] and record["flops"] is not None:
            by_path.setdefault(path, []).append((number, record))
    sites: dict = {}
    for result in report.results:
        config = resolver.for_path(result.path)
        configs[id(config)] = config
        checked.add(relative_path(result.path, config.root))
        roots.add(config.root if config.root is not None else os.getcwd())
        records = by_path.get(result.path)
        if not records:
            continue
        try:
            text = (texts or {}).get(result.path) or read_source(result.path)
        except UnreadableFile:
            text = ""
        path = relative_path(result.path, config.root)
        entries = [(r["line"], r["column"], r["expression"],
                    CurrentSite(result.path, r["line"], r["column"], number, _costs(r))) for number, r in records]
        for key, site in keyed(path, Scopes(text), entries):
            sites[key] = site
    return Collected(sites, list(configs.values()), checked, roots)
