"""`--format json` (Contract 6): findings and every call site, resolved or not."""

from __future__ import annotations

from .indented_json import Streamed


def report_data(report, resolver) -> dict:
    site_ids = {}
    models = getattr(report, "models", None)  # whole_model.check_merge.ModelsInCheck
    sites = []
    for result in report.results:
        for record in result.iter_records():
            site_ids[(result.path, record["id"])] = len(sites)
            contexts = models.contexts.get((result.path, record["id"])) if models is not None else None
            sites.append({**record, "id": len(sites), **({"contexts": contexts} if contexts else {})})
        for record in (models.records.get(result.path, []) if models is not None else []):
            site_ids[(result.path, record["id"])] = len(sites)  # reached only from a model (Contract 7)
            sites.append({**record, "id": len(sites)})
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
    chunks: list = []
    render_json_streamed(report, resolver).write_to(chunks.append)
    return "".join(chunks)


def render_json_streamed(report, resolver) -> Streamed:
    """render_json's text, for a writer (cli.output.write_output) to write as it is made."""
    return Streamed(report_data(report, resolver), indent=2, ensure_ascii=False, end="\n", consume=True)
