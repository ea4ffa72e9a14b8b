"""The one function every front end wraps: `lint_source(text, path, config) -> LintResult`.

Data flows one way: source → analysis (shapes, call sites) → costs → rules → findings. Nothing
raises out of here: an unexpected error becomes a TCL900 finding for the file, so flake8,
pre-commit and editors never crash on our account.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass, field

import libcst as cst

from ..analysis.file_analysis import analyse_source
from ..analysis.site_registry import PREFILTER_NAMES
from ..rules.findings import Finding
from .lint_settings import LintSettings, lint_settings
from ..rules import ALL_RULES, INTERNAL_ERROR, RuleContext, SiteResult, describe
from ..costing.site_costs import cost_site, unresolved
from ..safe_io.source_lines import source_lines

SYNTAX_ERROR_CODE = "E999"
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
# A file with none of these can raise no finding: no call site of the registry (TCL1xx-5xx), no
# shape annotation, shape comment, einops call or pragma (TCL001/TCL002). Such files skip the parse
# entirely. The registry's call names as plain substrings, no word boundaries: a superset of the
# names unit selection looks for, and several times faster to scan than `\b`-anchored names.
_CANDIDATE = re.compile(
    "@|" + "|".join(re.escape(name) for name in sorted(PREFILTER_NAMES, key=lambda n: (-len(n), n)))
    + r"|tensorcost|einops"
    r"|\[\s*(?:torch\.|jax\.|jnp\.|np\.|numpy\.)?(?:Tensor|Array|ndarray)|TensorType"
    r"|#\s*(?:shape\s*:|[(\[]\s*\w)"
)


@dataclass
class LintResult:
    path: str
    findings: list = field(default_factory=list)
    sites: list = field(default_factory=list)  # SiteResult
    sizes: dict = field(default_factory=dict)
    skipped: bool = False  # the prefilter found nothing to analyse
    site_records: list | None = None  # JSON site records, when the result came from the cache
    bindings: list = field(default_factory=list)  # analysis.context.Binding, when lint_source was asked
    settings: LintSettings | None = None  # what the lint read of the config (None: served from the cache)

    def records(self) -> list[dict]:
        """Contract 6 site records with per-file ids (cached, or made from the analysis)."""
        if self.site_records is not None:
            return self.site_records
        from ..formats.site_records import site_record

        return [site_record(s.site.id, self.path, s, self.settings) for s in self.sites]


def may_have_findings(text: str) -> bool:
    """The prefilter: False only for files that can raise no finding at all."""
    return _CANDIDATE.search(text) is not None


def _noqa_codes(line: str):
    """None if the line has no noqa; an empty set for a bare `# noqa` (silences everything)."""
    if "noqa" not in line.lower():
        return None
    match = _NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    return set() if not codes else {c.upper() for c in re.split(r"[,\s]+", codes) if c}


def apply_noqa(findings: list, lines: list[str]) -> list:
    kept = []
    for finding in findings:
        text = lines[finding.line - 1] if 0 < finding.line <= len(lines) else ""
        codes = _noqa_codes(text)
        if codes is not None and (not codes or any(finding.code.startswith(c) for c in codes)):
            continue
        kept.append(finding)
    return kept


def _internal_error(path: str, error: BaseException) -> Finding:
    if isinstance(error, RecursionError):
        message = "internal error: the file is nested too deeply to analyse (recursion limit)"
    else:
        frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
        where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
        message = f"internal error: {type(error).__name__}: {error}{where}; please report it"
    return INTERNAL_ERROR.report(path, 1, 1, " ".join(message.split())[:500])


def _syntax_error(path: str, text: str, error) -> Finding:
    """Python's own wording and position where it has one (`'(' was never closed`), else LibCST's."""
    import ast

    try:
        ast.parse(text)
    except SyntaxError as python_error:
        return Finding(path, python_error.lineno or 1, python_error.offset or 1, SYNTAX_ERROR_CODE, "error",
                       f"SyntaxError: {python_error.msg}")
    except (ValueError, RecursionError, MemoryError):
        pass
    line = getattr(error, "raw_line", None) or getattr(error, "lineno", None) or 1
    column = getattr(error, "raw_column", None)
    column = column + 1 if column is not None else (getattr(error, "offset", None) or 1)
    message = getattr(error, "message", None) or getattr(error, "msg", None) or str(error)
    return Finding(path, line, column, SYNTAX_ERROR_CODE, "error", f"SyntaxError: {message}")


def lint_source(text: str, path: str, config, *, noqa: bool = True, prefilter: bool = True, tree=None,
                bindings: bool = False, front_end: str = "libcst") -> LintResult:
    """Lint one file. `tree` is the stdlib `ast` of `text` when the host already has it (flake8);
    `bindings`: also keep each tensor binding and use (the language server's hints and hover);
    `front_end="ast"`: build the analysed trees from the stdlib tree instead of LibCST's parser
    (the same findings; analysis/ast_front.py)."""
    settings = lint_settings(config, path)  # the one settings object everything below reads
    result = LintResult(path, settings=settings)
    codes = settings.codes
    if prefilter and not may_have_findings(text):
        result.skipped = True
        return result
    try:
        analysis = analyse_source(text, path, settings, settings.cli_dims, tree=tree, bindings=bindings,
                                  front_end=front_end)
    except (SyntaxError, cst.ParserSyntaxError) as error:
        result.findings.append(_syntax_error(path, text, error))
        return result
    except UnicodeError as error:
        result.findings.append(Finding(path, 1, 1, "E902", "error",
                                       f"cannot read the source text: {error.reason} (a lone surrogate?)"))
        return result
    except Exception as error:  # noqa: BLE001 - the host linter must never crash
        if "TCL900" in codes:
            result.findings.append(_internal_error(path, error))
        return result
    result.sizes = analysis.sizes
    result.bindings = analysis.bindings or []
    for site in analysis.sites:
        try:
            cost = cost_site(site, analysis.sizes, settings, describe)
        except Exception as error:  # noqa: BLE001 - reported as TCL900, never raised
            cost = unresolved(f"internal error while costing: {type(error).__name__}: {error}")
            if "TCL900" in codes:
                crash = _internal_error(path, error)
                result.findings.append(INTERNAL_ERROR.report(path, site.line, site.column, crash.message, site=site.id))
        result.sites.append(SiteResult(site, cost))
    context = RuleContext(path, settings, analysis.sizes, result.sites, analysis.reported)
    for rule in ALL_RULES:
        if rule.code not in codes:
            continue
        try:
            result.findings.extend(rule.check(context))
        except Exception as error:  # noqa: BLE001
            if "TCL900" in codes:
                result.findings.append(_internal_error(path, error))
    if noqa and result.findings:
        result.findings = apply_noqa(result.findings, source_lines(text))
    result.findings.sort(key=Finding.sort_key)
    return result
