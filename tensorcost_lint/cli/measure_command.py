"""`tensorcost measure PATHS | PLAN.yaml`: run each planned operation on synthetic operands and
compare the time with its modelled lower bound.

Exit 0 when every bound held (or had nothing to hold), 1 when any measurement is below its bound
(EVIDENCE VIOLATED: the hardware record is wrong), 2 on usage or config errors.
"""

from __future__ import annotations

import os
import sys

from ..config.errors import ConfigError
from .check_command import add_common_arguments
from .output import write_output

PLAN_SUFFIXES = (".yaml", ".yml")


def add_arguments(parser) -> None:
    add_common_arguments(parser)
    from ..measurement.chosen_evidence import add_evidence_arguments

    add_evidence_arguments(parser)
    parser.add_argument("--backend", choices=("numpy", "torch", "jax"), default="numpy",
                        help="library that runs the synthetic operations (default: numpy)")
    parser.add_argument("--device", default="cpu", metavar="cpu|cuda[:N]", help="torch/jax device (default: cpu)")
    parser.add_argument("--threads", type=int, metavar="N", help="threads for the backend (match the evidence's)")
    parser.add_argument("--repeats", type=int, default=10, metavar="N", help="timed runs per site (default: 10)")
    parser.add_argument("--warmup", type=int, default=2, metavar="N", help="untimed runs first (default: 2)")
    parser.add_argument("--seconds-per-site", type=float, default=2.0, metavar="S",
                        help="stop repeating a site after S seconds (at least 3 runs; default: 2)")
    parser.add_argument("--max-site-seconds", type=float, default=10.0, metavar="S",
                        help="skip sites predicted to take longer, all runs together (default: 10)")
    parser.add_argument("--memory-cap", metavar="BYTES",
                        help="skip sites whose synthetic data needs more (default: 25%% of free memory)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="a table, or JSON rows (what `report --measurements` reads)")
    parser.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def _settings(args):
    from estimator.units import format_bytes

    from ..config.byte_sizes import parse_byte_size
    from ..measurement.machine import available_memory_bytes
    from ..measurement.measure_runs import MeasureSettings

    for flag, value, minimum in (("--repeats", args.repeats, 1), ("--warmup", args.warmup, 0),
                                 ("--threads", args.threads, 1)):
        if value is not None and value < minimum:
            raise ConfigError(flag, str(value), f"must be at least {minimum}")
    for flag, value in (("--seconds-per-site", args.seconds_per_site), ("--max-site-seconds", args.max_site_seconds)):
        if not 0 < value < float("inf"):
            raise ConfigError(flag, str(value), "must be a positive number of seconds")
    if args.memory_cap is not None:
        try:
            cap = parse_byte_size(args.memory_cap)
        except ValueError as error:
            raise ConfigError("--memory-cap", args.memory_cap, str(error)) from None
        text = format_bytes(cap)
    else:
        free = available_memory_bytes()
        cap = None if free is None else free // 4
        text = "none (free memory unknown)" if cap is None else f"{format_bytes(cap)} (25% of free memory)"
    return MeasureSettings(args.repeats, args.warmup, args.seconds_per_site, cap, text, args.max_site_seconds)


def _workloads(args, resolver):
    from ..config.plan_files import load_plan
    from ..measurement.workloads import plan_workload, site_workload
    from ..driver.runner import lint_paths

    paths = args.paths or ["."]
    for path in paths:
        if not os.path.exists(path):
            raise ConfigError(path, "", "no such file or directory")
    plans = [p for p in paths if os.path.isfile(p) and p.endswith(PLAN_SUFFIXES)]
    sources = [p for p in paths if p not in plans]
    workloads = []
    if sources:
        report = lint_paths(sources, resolver)
        for number, path, site_result in report.numbered_sites():
            workloads.append(site_workload(number, path, site_result, resolver.for_path(path)))
    for path in plans:
        plan = resolver.plan_with_evidence(load_plan(path, resolver.extra), path)
        workloads.append(plan_workload(len(workloads), path, plan))
    return workloads


def _say(text: str) -> None:
    print(f"tensorcost measure: {text}", file=sys.stderr, flush=True)


def run(args) -> int:
    from ..measurement.backends import make_backend
    from ..measurement.chosen_evidence import EvidenceResolver
    from ..measurement.measure_runs import VIOLATED, evidence_warnings, measure_workloads, plan_sites
    from ..measurement.measure_table import render_measure_json, render_measure_text
    from ..measurement.progress import ProgressBar, duration_text
    from ..measurement.time_forecast import MachineRates

    settings = _settings(args)
    resolver = EvidenceResolver(args)
    workloads = _workloads(args, resolver)
    backend = make_backend(args.backend, args.threads, args.device.strip().lower())
    # said first: a user deciding whether to wait needs to know the numbers will mean little
    warnings = evidence_warnings(workloads, backend)
    for warning in warnings:
        _say(f"warning: {warning}")
    planned = plan_sites(workloads, backend, settings, MachineRates(backend))
    running = [site for site in planned if site.runs]
    over = [site for site in planned if site.over_limit]
    if over:
        _say(f"not running {len(over)} site{'s' if len(over) != 1 else ''} predicted over --max-site-seconds "
             f"{settings.max_site_seconds:g} or the memory cap:")
        for site in over:
            _say(f"  #{site.workload.id} {site.workload.location} {site.workload.operation}: {site.skip_reason}")
    predicted = [site.forecast.site_seconds for site in running]
    if running:
        _say(f"running {len(running)} site{'s' if len(running) != 1 else ''}, predicted about "
             f"{duration_text(sum(predicted))}")
    progress = ProgressBar("measure", len(running), enabled=not args.no_progress and bool(running),
                           weights=predicted)
    finished: list = []
    interrupted = False
    try:
        measurements = measure_workloads(planned, backend, settings, progress, finished)
    except KeyboardInterrupt:
        interrupted = True
        measurements = sorted(finished, key=lambda m: m.workload.id)
        if progress.interactive:
            sys.stderr.write("\n")
    library = backend.library
    hardware = sorted({w.hardware_id for w in workloads if w.hardware_id})
    if args.format == "json":
        context = {"backend": backend.name, "device": args.device, "library": library.description,
                   "threads": library.threads, "hardware": hardware, "memory_cap_bytes": settings.memory_cap_bytes,
                   "max_site_seconds": settings.max_site_seconds, "interrupted": interrupted}
        text = render_measure_json(measurements, context, warnings)
    else:
        threads = f", {library.threads} thread{'s' if library.threads != 1 else ''}" if library.threads else ""
        header = [f"backend: {library.description}{threads}; device: {args.device}",
                  f"evidence: {', '.join(hardware) or 'none'}; memory cap: {settings.memory_cap_text}; "
                  f"{settings.repeats} repeats after {settings.warmup} warm-up, operands cold for each run; "
                  f"sites predicted over {settings.max_site_seconds:g} s skipped"]
        if interrupted:
            header.append(f"interrupted: {len(measurements)} of {len(workloads)} sites finished")
        text = render_measure_text(measurements, header, warnings)
    write_output(text, args.output)
    if interrupted:
        print(f"tensorcost: interrupted: wrote the {len(measurements)} finished of {len(workloads)} sites",
              file=sys.stderr)
        return 130
    return 1 if any(m.status == VIOLATED for m in measurements) else 0
