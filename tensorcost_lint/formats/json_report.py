"""`--format json` (Contract 6): findings and every call site, resolved or not."""

from __future__ import annotations

import json

from .site_records import site_record


def report_data(report, resolver) -> dict:
    site_ids = {}
    sites = []
    for number, path, site_result in report.numbered_sites():
        config = resolver.for_path(path)
        site_ids[(path, site_result.site.id)] = number
        sites.append(site_record(number, path, site_result, config.default_dtype, config.hardware_id))
    findings = []
    for result in report.results:
        for finding in result.findings:
            findings.append({
                "path": finding.path,
                "line": finding.line,
                "column": finding.column,
                "end_line": finding.end_line,
                "end_column": finding.end_column,
                "code": finding.code,
                "severity": finding.severity,
                "message": finding.message,
                "site": site_ids.get((result.path, finding.site)) if finding.site is not None else None,
            })
    return {"version": 1, "files_checked": report.files_checked, "findings": findings, "sites": sites}


def render_json(report, resolver) -> str:
    return json.dumps(report_data(report, resolver), indent=2, ensure_ascii=False) + "\n"
