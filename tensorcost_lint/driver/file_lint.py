"""One file from disk: read it, skip it on the prefilter, serve or fill the result cache.

Its own module so that the serial runner and the `--jobs` workers (parallel.py) share it without
importing each other.
"""

from __future__ import annotations

from .engine import LintResult, lint_source, may_have_findings
from ..safe_io.files import UnreadableFile, read_source
from ..rules.findings import Finding

READ_ERROR_CODE = "E902"


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
    # the stdlib front end (analysis/ast_front.py): the same findings and sites, positions read from
    # the stdlib tree in O(1) instead of LibCST regenerating each unit's code (a file of 33,000
    # small functions: 5 s instead of 23 s); what it does not build goes to LibCST's parser
    result = lint_source(text, path, config, prefilter=False, front_end="ast")
    if cache is not None:
        cache.put(text, path, config, result)
    return result
