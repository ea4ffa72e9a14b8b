"""Linting many files: config per file, reading, the result cache, and the report they make."""

from __future__ import annotations

from dataclasses import dataclass, field

from .engine import LintResult, lint_source, may_have_findings
from .files import UnreadableFile, discover, read_source
from .findings import Finding

READ_ERROR_CODE = "E902"


@dataclass
class Report:
    files_checked: int = 0
    results: list = field(default_factory=list)  # LintResult per file, in path order
    missing: list = field(default_factory=list)

    @property
    def findings(self) -> list:
        return [f for result in self.results for f in result.findings]

    def numbered_records(self, resolver):
        """(global id, path, record) for every site in the report, cached or fresh."""
        number = 0
        for result in self.results:
            for record in result.records(resolver.for_path(result.path)):
                yield number, result.path, {**record, "id": number}
                number += 1

    def numbered_sites(self):
        """(global id, path, SiteResult) across the report: ids are unique in one report."""
        number = 0
        for result in self.results:
            for site_result in result.sites:
                yield number, result.path, site_result
                number += 1


def lint_file(path: str, config, *, cache=None) -> LintResult:
    try:
        text = read_source(path)
    except UnreadableFile as error:
        result = LintResult(path)
        result.findings.append(Finding(path, 1, 1, READ_ERROR_CODE, "error", str(error)))
        return result
    return lint_text(text, path, config, cache=cache)


def lint_text(text: str, path: str, config, *, cache=None) -> LintResult:
    """Lint text already read (a file, or stdin under `--stdin-filename`)."""
    if not may_have_findings(text):
        return LintResult(path, skipped=True)  # cheaper than a cache lookup
    if cache is not None:
        cached = cache.get(text, path, config)
        if cached is not None:
            return cached
    result = lint_source(text, path, config, prefilter=False)
    if cache is not None:
        cache.put(text, path, config, result)
    return result


def lint_paths(paths, resolver, *, cache=None, jobs: int = 1) -> Report:
    files, missing = discover(paths, lambda p: resolver.for_path(p).exclude)
    report = Report(files_checked=len(files), missing=missing)
    if jobs > 1 and len(files) > 1:
        from .parallel import lint_in_parallel

        report.results = lint_in_parallel(files, resolver, cache=cache, jobs=jobs)
    else:
        report.results = [lint_file(path, resolver.for_path(path), cache=cache) for path in files]
    return report
