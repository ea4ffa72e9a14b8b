"""`tensorcost baseline [PATHS] [--output tensorcost-baseline.json]`: write the cost baseline
(Contract 8) that `tensorcost check --baseline FILE` compares against."""

from __future__ import annotations

from ..config.config_discovery import ConfigResolver
from ..driver.runner import lint_paths
from .check_command import add_common_arguments, check_paths, overrides_from
from .output_files import files_in_use, write_file

DEFAULT_OUTPUT = "tensorcost-baseline.json"


def add_arguments(parser) -> None:
    add_common_arguments(parser)
    parser.add_argument("--output", default=DEFAULT_OUTPUT, metavar="FILE",
                        help=f"where to write the baseline (default {DEFAULT_OUTPUT}; `-` for stdout)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    parser.add_argument("--cache-dir", metavar="DIR", help="result cache directory")


def run(args) -> int:
    import sys

    from ..baseline.collect import collect
    from ..baseline.document import current, encode

    paths = args.paths or ["."]
    check_paths(paths)
    resolver = ConfigResolver(overrides_from(args))
    cache = None
    if not args.no_cache:
        from ..driver.cache import ResultCache

        cache = ResultCache(args.cache_dir) if args.cache_dir else ResultCache.default()
    report = lint_paths(paths, resolver, cache=cache)
    from ..cost_gate.model_gate import current_models
    from ..model_check.check_merge import merge, run_models
    from .check_command import _model_cache

    outcomes = run_models(report, resolver, _model_cache(args))
    if outcomes:
        report.models = merge(report, resolver, outcomes)
        for note in report.models.notes:
            if "could not be analysed" in note:
                print(f"tensorcost: note: {note}", file=sys.stderr)
    models, _ = current_models(report, resolver)
    collected = collect(report, resolver)
    sites = collected.sites
    data = encode(current({key: site.costs for key, site in sites.items()}, collected.configs or [resolver.for_path(".")],
                          models))
    if args.output == "-":
        sys.stdout.write(data.decode("utf-8"))
        return 0
    write_file(args.output, data, "--output", files_in_use(report, resolver))
    in_models = f" and {len(models)} model(s)" if models else ""
    print(f"tensorcost: wrote {len(sites)} site(s){in_models} to {args.output}")
    return 0
