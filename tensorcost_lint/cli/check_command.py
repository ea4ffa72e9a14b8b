"""`tensorcost check [PATHS...]`: lint files; exit 0 clean, 1 findings, 2 usage/config error.

`tensorcost check -` lints one file read from stdin (`--stdin-filename` names it: config
discovery and per-file ignores use that name). `--fix` applies the fixes rules carry, `--diff`
prints them as a unified diff and changes nothing (exit 1 when there is one).
"""

from __future__ import annotations

import os

from ..config.errors import ConfigError
from ..config.flake8_settings import read_flake8_settings
from ..config.per_file_ignores import parse_cli_entries
from ..config.config_discovery import ConfigResolver, Overrides, parse_dim_override
from ..rules.selection import check_selectors
from ..driver.runner import lint_paths
from .output import write_output
from .output_files import files_in_use

FORMATS = ("text", "json", "sarif", "github", "markdown")  # markdown: with --baseline
STDIN = "-"


def add_common_arguments(parser) -> None:
    """Flags shared by `check`, `report` and `measure`: where config comes from and what overrides it."""
    parser.add_argument("paths", nargs="*", default=None, metavar="PATHS", help="files or directories (default: .)")
    parser.add_argument("--config", metavar="FILE", help="use this tensorcost.yaml / pyproject.toml, no discovery")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                        help="declare or override a dim size (repeatable; beats config and pragmas)")
    parser.add_argument("--hardware", metavar="ID", help="hardware evidence id (shipped or from `evidence`)")


def _codes(text: str | None, flag: str):
    if text is None:
        return None
    codes = [c.strip() for c in text.split(",") if c.strip()]
    for code in codes:
        if not code.isalnum():
            raise ConfigError(flag, code, "expected rule codes or prefixes like TCL4,TCL501")
    return check_selectors(flag, "", codes)


def add_arguments(parser) -> None:
    add_common_arguments(parser)
    parser.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to enable (replaces defaults)")
    parser.add_argument("--extend-select", metavar="CODES", help="codes or prefixes to enable on top of the selection")
    parser.add_argument("--ignore", metavar="CODES", help="codes or prefixes to disable")
    parser.add_argument("--extend-ignore", metavar="CODES", help="codes or prefixes to disable, on top of `ignore`")
    parser.add_argument("--per-file-ignores", action="append", default=[], metavar="GLOB:CODES",
                        help="disable codes for files matching GLOB (relative to the working directory; repeatable)")
    parser.add_argument("--extend-exclude", metavar="GLOBS", help="comma-separated globs not to walk into, on top of `exclude`")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="report format: lines, JSON (Contract 6), SARIF 2.1.0, GitHub annotations, or the "
                             "pull-request table (markdown, with --baseline)")
    parser.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("--statistics", action="store_true", help="count findings per code and call sites resolved")
    parser.add_argument("--quiet", "-q", action="store_true", help="print the findings only, no summary or hint")
    parser.add_argument("--show-source", action="store_true", help="print each finding's source line and a caret")
    parser.add_argument("--stdin-filename", metavar="PATH", help="with `-`: the name of the file read from stdin")
    parser.add_argument("--fix", action="store_true", help="apply the fixes rules carry, then report what is left")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    parser.add_argument("--baseline", metavar="FILE",
                        help="compare costs with this `tensorcost baseline` file: TCL601 per grown site (Contract 8)")
    parser.add_argument("--jobs", "-j", type=int, default=1, metavar="N", help="check files in N processes")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="result cache directory (default .tensorcost_cache, or $TENSORCOST_CACHE_DIR)")


def overrides_from(args) -> Overrides:
    """CLI flags over the `tensorcost-*` settings of flake8's config file (read as flake8 reads
    them, so both front ends see one configuration), over the discovered tensorcost config."""
    settings = read_flake8_settings(os.getcwd())
    dims = ()
    config_file, hardware = args.config, args.hardware
    if settings is not None:
        dims = tuple(parse_dim_override(text, f"{settings.path}: [flake8] tensorcost-dim") for text in settings.dims)
        config_file = config_file or settings.config
        hardware = hardware or settings.hardware
    dims += tuple(parse_dim_override(text) for text in args.dim)
    ignore = _codes(getattr(args, "ignore", None), "--ignore")
    extend_ignore = _codes(getattr(args, "extend_ignore", None), "--extend-ignore")
    if extend_ignore:
        ignore = (ignore or ()) + extend_ignore
    extend_exclude = tuple(g.strip() for g in (getattr(args, "extend_exclude", None) or "").split(",") if g.strip())
    return Overrides(
        config_file=config_file,
        dims=dims,
        hardware=hardware,
        select=_codes(getattr(args, "select", None), "--select"),
        extend_select=_codes(getattr(args, "extend_select", None), "--extend-select") or (),
        ignore=ignore,
        per_file_ignores=parse_cli_entries(getattr(args, "per_file_ignores", None) or [], os.getcwd()),
        extend_exclude=extend_exclude,
    )


def check_paths(paths):
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise ConfigError(missing[0], "", "no such file or directory")
    special = [p for p in paths if not os.path.isfile(p) and not os.path.isdir(p)]
    if special:  # a FIFO or a device: reading it would block or never end
        raise ConfigError(special[0], "", "not a regular file or directory")


def _check_usage(args, paths) -> None:
    if args.jobs < 1:
        raise ConfigError("--jobs", str(args.jobs), "must be at least 1")
    if STDIN in paths and len(paths) > 1:
        raise ConfigError(STDIN, "", "stdin (`-`) cannot be checked together with other paths")
    if args.stdin_filename is not None and paths != [STDIN]:
        raise ConfigError("--stdin-filename", args.stdin_filename, "only applies when the path is `-` (stdin)")
    if args.format == "markdown" and not args.baseline:
        raise ConfigError("--format", "markdown", "the pull-request table needs --baseline FILE")
    if args.fix and paths == [STDIN] and not args.diff:
        raise ConfigError("--fix", STDIN, "cannot write a fix back to stdin; use --diff to see it")


def _render(report, args, resolver, sources, comparison=None):
    if args.format == "markdown":
        from ..cost_gate.markdown import render_markdown

        return render_markdown(comparison, report.findings)
    if args.format == "json":
        from ..formats.json_report import render_json_streamed

        return render_json_streamed(report, resolver)
    if args.format == "sarif":
        from ..formats.sarif import render_sarif

        return render_sarif(report, resolver)
    if args.format == "github":
        from ..formats.github import render_github

        return render_github(report)
    from ..formats.text import render_text

    source_of = sources.lines if args.show_source else None
    text = render_text(report, statistics=args.statistics, resolver=resolver, quiet=args.quiet, source_of=source_of)
    from ..safe_io.printable import printable

    # model names, notes and baseline lines carry the repository's strings: escaped, one line each
    if report.models is not None and not args.quiet:
        text += "".join(printable(line) + "\n" for line in report.models.summary_lines())
    if comparison is not None and not args.quiet:
        from ..cost_gate.gate import summary_lines

        text += "".join(printable(line) + "\n" for line in summary_lines(comparison))
    return text


def _model_cache(args):
    """Whole-model results are cached beside the per-file results (whole_model.model_cache)."""
    if getattr(args, "no_cache", False):
        return None
    from ..driver.cache import ResultCache
    from ..model_check.model_cache import ModelCache

    return ModelCache(ResultCache(args.cache_dir) if args.cache_dir else ResultCache.default())


def run(args) -> int:
    from .check_inputs import FixRun, SourceLines, lint_stdin

    paths = args.paths or ["."]
    _check_usage(args, paths)
    if paths != [STDIN]:
        check_paths(paths)
    resolver = ConfigResolver(overrides_from(args))
    baseline = None
    if args.baseline:  # read first: a file that is not a baseline stops before any linting
        from ..baseline.document import load

        baseline = load(args.baseline)
    sources = SourceLines()
    stdin_texts = {}
    if paths == [STDIN]:
        report, text = lint_stdin(args.stdin_filename, resolver)
        sources.remember(report.results[0].path, text)
        stdin_texts[report.results[0].path] = text
        if args.diff:
            return FixRun(resolver, sources).diff_stdin(report, text)
    else:
        cache = None
        if not args.no_cache:
            from ..driver.cache import ResultCache

            cache = ResultCache(args.cache_dir) if args.cache_dir else ResultCache.default()
        report = lint_paths(paths, resolver, cache=cache, jobs=args.jobs)
        if args.fix or args.diff:  # a cached result carries its fixes: it says which files to fix
            fixing = FixRun(resolver, sources)
            if args.diff:
                return fixing.diff(report)
            report = fixing.fix(report)
            if args.format == "text" and not args.quiet:
                print(fixing.summary())
    if paths != [STDIN] and not (args.fix or args.diff):
        from ..model_check.check_merge import merge, run_models

        outcomes = run_models(report, resolver, _model_cache(args))
        if outcomes:
            report.models = merge(report, resolver, outcomes)  # never raises: a failed run is a note
    comparison = None
    if baseline is not None:
        from ..cost_gate.gate import gate

        comparison = gate(report, resolver, baseline, stdin_texts)
    write_output(_render(report, args, resolver, sources, comparison), args.output,
                 files_in_use(report, resolver) if args.output else ())
    return 0 if args.exit_zero or not report.findings else 1
