"""`--format sarif`: a SARIF 2.1.0 log, the format GitHub code scanning (and most CI dashboards)
ingest. One run; every rule described once in the driver; each finding a result with a 1-based
region and a fingerprint that survives unrelated edits, so code scanning tracks an alert across
commits instead of closing and reopening it whenever lines above it move.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from ..driver.engine import SYNTAX_ERROR_CODE
from ..safe_io.files import UnreadableFile, read_source
from ..rules import ALL_RULES
from ..rules.docs import RULE_DOCS_URL
from ..driver.runner import READ_ERROR_CODE
from ..safe_io.source_lines import source_lines
from .github import workspace_path

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/tensorcost/tensorcost"
# Rule documentation links come from rules/docs.py (RULE_DOCS_URL, re-exported here for the
# language server); `tensorcost explain CODE` prints the same page from the rule's own fields.
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
# Findings that are not rules of ours: the file could not be parsed or read at all.
_HOST_RULES = (
    (SYNTAX_ERROR_CODE, "syntax-error", "the file is not valid Python, so nothing in it was analysed"),
    (READ_ERROR_CODE, "unreadable-file", "the file could not be read or decoded, so nothing in it was analysed"),
)
_SRCROOT = "SRCROOT"
FINGERPRINT_KEY = "tensorcostFinding/v1"


def rule_help_uri(code: str) -> str | None:
    return RULE_DOCS_URL.format(code=code) if code.startswith("TCL") else None


def _rule_descriptor(rule) -> dict:
    help_text = f"{rule.why_bad}\n\nExample:\n    {rule.example}\nUse instead:\n    {rule.use_instead}"
    help_markdown = (f"{rule.what_it_does}\n\n**Why is this bad?** {rule.why_bad}\n\n**Example**\n\n```python\n"
                     f"{rule.example}\n```\n\n**Use instead**\n\n```python\n{rule.use_instead}\n```")
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.what_it_does or rule.summary},
        "helpUri": rule_help_uri(rule.code),
        "help": {"text": help_text, "markdown": help_markdown},
        "defaultConfiguration": {"level": LEVELS[rule.severity], "enabled": rule.default_enabled},
    }


def rule_descriptors() -> list[dict]:
    descriptors = [_rule_descriptor(rule) for rule in ALL_RULES]
    for code, name, text in _HOST_RULES:
        descriptors.append({"id": code, "name": name, "shortDescription": {"text": text},
                            "defaultConfiguration": {"level": "error"}})
    return descriptors


def _artifact_location(path: str) -> dict:
    """Relative to SRCROOT (the working directory: the checkout in CI) where possible, which is
    what code scanning needs to place an alert on a file of the repository."""
    relative = workspace_path(path)
    if Path(relative).is_absolute():
        return {"uri": Path(relative).as_uri()}
    return {"uri": quote(relative), "uriBaseId": _SRCROOT}


def _region(finding) -> dict:
    region = {"startLine": finding.line, "startColumn": finding.column}
    if finding.end_line is not None and finding.end_column is not None:
        end = (finding.end_line, finding.end_column)
        if end > (finding.line, finding.column):  # an empty region is legal but shows nothing
            region["endLine"], region["endColumn"] = end
    return region


class _SourceLines:
    """Lines of checked files, read once each, for fingerprints."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}

    def line(self, path: str, number: int) -> str:
        if path not in self._lines:
            try:
                self._lines[path] = source_lines(read_source(path))
            except UnreadableFile:
                self._lines[path] = []
        lines = self._lines[path]
        return lines[number - 1] if 0 < number <= len(lines) else ""


def _fingerprints(findings, sources: _SourceLines) -> list[str]:
    """path + code + the finding's source line without its whitespace + which occurrence of that
    triple it is. Line numbers and message numbers are left out on purpose: inserting code above
    a finding, or changing a budget, must not make it a new alert."""
    seen: Counter = Counter()
    prints = []
    for finding in findings:
        text = "".join(sources.line(finding.path, finding.line).split())
        key = (workspace_path(finding.path), finding.code, text)
        seen[key] += 1
        digest = hashlib.sha256("\0".join((*key, str(seen[key]))).encode("utf-8", "surrogatepass")).hexdigest()
        prints.append(digest[:32])
    return prints


def sarif_log(report, resolver=None) -> dict:
    descriptors = rule_descriptors()
    index = {descriptor["id"]: number for number, descriptor in enumerate(descriptors)}
    findings = report.findings
    fingerprints = _fingerprints(findings, _SourceLines())
    results = []
    for finding, fingerprint in zip(findings, fingerprints):
        result = {
            "ruleId": finding.code,
            "level": LEVELS.get(finding.severity, "warning"),
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact_location(finding.path),
                                                "region": _region(finding)}}],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
        }
        if finding.code in index:
            result["ruleIndex"] = index[finding.code]
        results.append(result)
    run = {
        "tool": {"driver": {"name": "tensorcost", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFORMATION_URI, "rules": descriptors}},
        "originalUriBaseIds": {_SRCROOT: {"uri": Path.cwd().resolve().as_uri() + "/"}},
        # LibCST positions count code points, not the UTF-16 units SARIF assumes by default.
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": True}],
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(report, resolver=None) -> str:
    return json.dumps(sarif_log(report, resolver), indent=2, ensure_ascii=False) + "\n"
