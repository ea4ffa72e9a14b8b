"""`tensorcost check [PATHS...]`: lint files; exit 0 clean, 1 findings, 2 usage/config error."""

from __future__ import annotations

from ..config.errors import ConfigError
from ..config.project_config import ConfigResolver, Overrides, parse_dim_override
from ..runner import lint_paths
from .output import write_output
from .output_files import files_in_use

FORMATS = ("text", "json", "sarif", "github")


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
    codes = tuple(c.strip().upper() for c in text.split(",") if c.strip())
    for code in codes:
        if not code.isalnum():
            raise ConfigError(flag, code, "expected rule codes or prefixes like TCL4,TCL501")
    return codes


def add_arguments(parser) -> None:
    add_common_arguments(parser)
    parser.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to enable (replaces defaults)")
    parser.add_argument("--extend-select", metavar="CODES", help="codes or prefixes to enable on top of the selection")
    parser.add_argument("--ignore", metavar="CODES", help="codes or prefixes to disable")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("--statistics", action="store_true", help="count findings per code and call sites resolved")
    parser.add_argument("--jobs", "-j", type=int, default=1, metavar="N", help="check files in N processes")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="result cache directory (default .tensorcost_cache, or $TENSORCOST_CACHE_DIR)")


def overrides_from(args) -> Overrides:
    dims = tuple(parse_dim_override(text) for text in args.dim)
    return Overrides(
        config_file=args.config,
        dims=dims,
        hardware=args.hardware,
        select=_codes(getattr(args, "select", None), "--select"),
        extend_select=_codes(getattr(args, "extend_select", None), "--extend-select") or (),
        ignore=_codes(getattr(args, "ignore", None), "--ignore"),
    )


def check_paths(paths):
    import os

    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise ConfigError(missing[0], "", "no such file or directory")
    special = [p for p in paths if not os.path.isfile(p) and not os.path.isdir(p)]
    if special:  # a FIFO or a device: reading it would block or never end
        raise ConfigError(special[0], "", "not a regular file or directory")


def run(args) -> int:
    paths = args.paths or ["."]
    check_paths(paths)
    if args.jobs < 1:
        raise ConfigError("--jobs", str(args.jobs), "must be at least 1")
    resolver = ConfigResolver(overrides_from(args))
    cache = None
    if not args.no_cache:
        from ..cache import ResultCache

        cache = ResultCache(args.cache_dir) if args.cache_dir else ResultCache.default()
    report = lint_paths(paths, resolver, cache=cache, jobs=args.jobs)
    if args.format == "json":
        from ..formats.json_report import render_json

        text = render_json(report, resolver)
    elif args.format == "sarif":
        from ..formats.sarif import render_sarif

        text = render_sarif(report, resolver)
    elif args.format == "github":
        from ..formats.github import render_github

        text = render_github(report)
    else:
        from ..formats.text import render_text

        text = render_text(report, statistics=args.statistics, resolver=resolver)
    write_output(text, args.output, files_in_use(report, resolver) if args.output else ())
    return 0 if args.exit_zero or not report.findings else 1
