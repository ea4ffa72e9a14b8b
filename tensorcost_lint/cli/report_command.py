"""`tensorcost report PATHS`: the per-site cost table, totals, a roofline picture and an HTML page.

Exit 0 whatever the findings (a report informs; `check` is the gate), 2 on usage/config errors.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..safe_io.bounded_read import read_capped
from ..config.errors import ConfigError
from .check_command import add_common_arguments
from .output import write_output
from .output_files import files_in_use, refuse_if_in_use, write_file

PICTURE_FORMATS = {".png": "png", ".svg": "svg"}
MAX_MEASUREMENTS_BYTES = 64 << 20


def add_arguments(parser) -> None:
    add_common_arguments(parser)
    from ..measurement.chosen_evidence import add_evidence_arguments

    add_evidence_arguments(parser)
    parser.add_argument("--roofline", metavar="FILE.png|FILE.svg", help="draw the roofline picture to FILE")
    parser.add_argument("--memory", metavar="FILE.png|FILE.svg",
                        help="draw each configured model's retained bytes per module (`models:`) to FILE")
    parser.add_argument("--html", metavar="FILE", help="write one self-contained HTML page (table, picture, findings)")
    parser.add_argument("--measurements", metavar="MEASURE.json",
                        help="`tensorcost measure --format json` output: measured points beside modelled ones")
    parser.add_argument("--output", metavar="FILE", help="write the text table to FILE instead of stdout")


def _measurements(path: str | None) -> list:
    if path is None:
        return []
    try:
        data = json.loads(read_capped(path, MAX_MEASUREMENTS_BYTES).decode("utf-8"))
    except OSError as error:  # a FIFO or /dev/zero is refused by read_capped, never read
        raise ConfigError(path, "--measurements", f"cannot read: {error.strerror or error}") from None
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise ConfigError(path, "--measurements", f"not JSON: {error}") from None
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("measurements"), list):
        raise ConfigError(path, "--measurements", "not the output of `tensorcost measure --format json`")
    return [m for m in data["measurements"] if isinstance(m, dict)]


def run(args) -> int:
    from ..measurement.chosen_evidence import EvidenceResolver
    from ..measurement.optional_imports import require
    from ..reporting.cost_table import attach_measurements, file_findings, site_rows, totals
    from ..reporting.text_report import render_report_text
    from ..driver.runner import lint_paths
    from .check_command import check_paths

    paths = args.paths or ["."]
    check_paths(paths)
    picture_format = None
    if args.roofline:
        picture_format = PICTURE_FORMATS.get(Path(args.roofline).suffix.lower())
        if picture_format is None:
            raise ConfigError("--roofline", args.roofline, "name a .png or .svg file")
    memory_format = None
    if args.memory:
        memory_format = PICTURE_FORMATS.get(Path(args.memory).suffix.lower())
        if memory_format is None:
            raise ConfigError("--memory", args.memory, "name a .png or .svg file")
    if args.roofline or args.html or args.memory:
        require("matplotlib", "report", "it draws the roofline and memory pictures")
    records = _measurements(args.measurements)
    resolver = EvidenceResolver(args)
    report = lint_paths(paths, resolver)
    rows = site_rows(report)
    if records:
        attach_measurements(rows, records)
    per_file, overall = totals(rows, report)
    fallback = resolver.for_path(paths[0])
    fallback = (fallback.hardware, fallback.traffic_boundary)
    named_inputs = [path for path in (*args.evidence, args.measurements) if path]
    inputs = files_in_use(report, resolver, extra=[(path, "an input file") for path in named_inputs])
    for flag, target in (("--roofline", args.roofline), ("--html", args.html), ("--memory", args.memory),
                         ("--output", args.output)):
        if target and target != "-":
            refuse_if_in_use(target, flag, inputs)  # before drawing anything
    if args.roofline:
        from ..reporting.roofline import render_roofline

        write_file(args.roofline, render_roofline(rows, picture_format, fallback), "--roofline", inputs)
    if args.html:
        from ..reporting.html_page import render_html
        from ..reporting.roofline import render_roofline

        picture = render_roofline(rows, "svg", fallback).decode("utf-8")
        page = render_html(rows, per_file, overall, file_findings(report), picture, with_measured=bool(records))
        write_file(args.html, page.encode("utf-8"), "--html", inputs)
    if args.memory:
        _draw_memory(args.memory, memory_format, resolver.for_path(paths[0]), inputs)
    write_output(render_report_text(rows, per_file, overall, with_measured=bool(records)), args.output, inputs)
    return 0


def _draw_memory(target: str, picture_format: str, config, inputs) -> None:
    from ..reporting.memory_bars import render_memory_bars
    from ..whole_model.report.report import model_json
    from .model_command import analyse_entries

    if not config.models:
        raise ConfigError(config.source or "tensorcost.yaml", "models", "no models configured; --memory draws them")
    models = [model_json(result, config.hardware_id) for result in analyse_entries(list(config.models), config)]
    write_file(target, render_memory_bars(models, picture_format), "--memory", inputs)
