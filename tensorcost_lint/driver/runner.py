"""Linting many files: config per file, reading, the result cache, and the report they make."""

from __future__ import annotations

from dataclasses import dataclass, field

from .file_lint import READ_ERROR_CODE, lint_file, lint_text
from ..safe_io.files import discover

__all__ = ["READ_ERROR_CODE", "Report", "lint_file", "lint_paths", "lint_text"]


@dataclass
class Report:
    files_checked: int = 0
    results: list = field(default_factory=list)  # LintResult per file, in path order
    missing: list = field(default_factory=list)
    models: object = None  # whole_model.check_merge.ModelsInCheck when `check` ran configured models

    @property
    def findings(self) -> list:
        return [f for result in self.results for f in result.findings]

    def numbered_records(self):
        """(global id, path, record) for every site in the report, cached or fresh."""
        number = 0
        for result in self.results:
            for record in result.records():
                yield number, result.path, {**record, "id": number}
                number += 1

    def numbered_sites(self):
        """(global id, path, SiteResult) across the report: ids are unique in one report."""
        number = 0
        for result in self.results:
            for site_result in result.sites:
                yield number, result.path, site_result
                number += 1


def lint_paths(paths, resolver, *, cache=None, jobs: int = 1) -> Report:
    files, missing = discover(paths, lambda p: resolver.for_path(p).exclude)
    report = Report(files_checked=len(files), missing=missing)
    if jobs > 1 and len(files) > 1:
        from .parallel import lint_in_parallel

        report.results = lint_in_parallel(files, resolver, cache=cache, jobs=jobs)
    else:
        report.results = [lint_file(path, resolver.for_path(path), cache=cache) for path in files]
    return report
