"""`tensorcost plan SUBSCRIPTS --shapes AxB,... | --dim i=N ...`: every contraction order of an
einsum, the best one, and the order each framework will really execute (Contract 5)."""

from __future__ import annotations

import json
import re

from estimator import CountOverflow, EstimatorError, normalize_dtype
from estimator.planner import network_from_dims, plan_report
from estimator.units import format_bytes, format_flops

from ..config.errors import ConfigError
from ..config.fields import _short
from .output import write_output

_DIM = re.compile(r"([A-Za-z])=([0-9][0-9_]*)")
_BYTES = re.compile(r"([0-9][0-9_]*)\s*(B|kB|KB|MB|GB|TB|KiB|MiB|GiB|TiB)")
_BYTE_UNITS = {"B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
               "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
MAX_COUNT = 2**63 - 1


def add_arguments(parser) -> None:
    parser.add_argument("subscripts", metavar="SUBSCRIPTS", help='einsum subscripts, e.g. "ij,jk,kl->il"')
    parser.add_argument("--shapes", metavar="AxB,CxD,...",
                        help="operand shapes in order, dims joined by 'x' (an empty entry is a scalar)")
    parser.add_argument("--dim", action="append", default=[], metavar="LETTER=SIZE",
                        help="bind an index letter to a size (repeatable; instead of --shapes)")
    parser.add_argument("--dtype", default="float32", help="element dtype for byte counts (default float32)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="a table of orders, or JSON (Contract 5)")
    parser.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")
    parser.add_argument("--memory-limit", metavar="N",
                        help="largest intermediate allowed: elements, or bytes with a unit (256MiB)")
    parser.add_argument("--minimize", choices=("flops", "size"), default="flops",
                        help="what the best order minimises (size: the largest intermediate)")


# 2**63-1 has 19 digits: a longer number is refused by its length, before int() (which raises past
# Python's 4,300-digit limit) and before a message echoes it whole.
_MAX_DIGITS = len(str(MAX_COUNT))


def _integer(digits: str, flag: str, what: str, text: str) -> int:
    if len(digits.lstrip("0")) > _MAX_DIGITS:
        raise ConfigError(flag, "", f"{what} {_short(text)} exceeds 2**63-1")
    return int(digits)


def _positive(text: str, flag: str, what: str) -> int:
    digits = text.replace("_", "")
    if not (digits.isascii() and digits.isdigit()) or _integer(digits, flag, what, text) < 1:
        raise ConfigError(flag, "", f"{what} must be a positive integer, got {_short(repr(text))}")
    if int(digits) > MAX_COUNT:
        raise ConfigError(flag, "", f"{what} {text!r} exceeds 2**63-1")
    return int(digits)


def parse_shapes(text: str) -> list[list[int]]:
    shapes = []
    for index, part in enumerate(text.split(",")):
        part = part.strip()
        dims = [] if part in ("", "()") else [d.strip() for d in re.split(r"[x×*]", part)]
        shapes.append([_positive(d, "--shapes", f"operand {index} dim") for d in dims])
    return shapes


def parse_dims(items: list[str]) -> dict[str, int]:
    dims: dict[str, int] = {}
    for item in items:
        match = _DIM.fullmatch(item.strip())
        if not match:
            raise ConfigError("--dim", "", f"expected LETTER=SIZE like i=1000, got {item!r}")
        dims[match.group(1)] = _positive(match.group(2), "--dim", f"size of {match.group(1)!r}")
    return dims


def parse_memory_limit(text: str | None, itemsize: int) -> int | None:
    if text is None:
        return None
    text = text.strip()
    match = _BYTES.fullmatch(text)
    if match:
        count = _integer(match.group(1).replace("_", ""), "--memory-limit", "the limit", text) * _BYTE_UNITS[match.group(2)]
        elements = count // itemsize
        if elements < 1:
            raise ConfigError("--memory-limit", "", f"{text} holds no whole {itemsize}-byte element")
        if elements > MAX_COUNT:
            raise ConfigError("--memory-limit", "", f"{text!r} exceeds 2**63-1 elements")
        return elements
    return _positive(text, "--memory-limit", "the limit (elements, or bytes with a unit like 256MiB)")


def _path_text(path) -> str:
    return "[" + ", ".join(str(tuple(step)) for step in path) + "]"


def _elements_text(count: int, itemsize: int) -> str:
    return f"{count} ({format_bytes(count * itemsize)})"


def render_text(report: dict, itemsize: int) -> str:
    shapes = ", ".join("x".join(str(d) for d in shape) or "()" for shape in report["shapes"])
    lines = [
        f"plan {report['canonical']}  shapes {shapes}  dtype {report['dtype']}",
        f"search: {report['search']['description']}",
    ]
    goal = "smallest largest intermediate" if report["minimize"] == "size" else "fewest FLOPs"
    limit = f", every intermediate <= {report['memory_limit']} elements" if report["memory_limit"] else ""
    if report["search"]["exact"]:
        lines.append(f"best: order {report['optimal']} ({goal}{limit})")
    else:
        lines.append(f"best found: order {report['optimal']} ({goal}{limit} among the orders searched; "
                     "not proven optimal)")
    refused = report["search"]["orders_refused_for_overflow"]
    if refused:
        lines.append(f"{refused} orders not listed: their counts exceed 2**63-1")
    for item in report["broadcasts"]:
        lines.append(f"note: index {item['index']!r} is broadcast (sizes {item['sizes'][0]} and {item['sizes'][1]})")
    rows = [("#", "path", "FLOPs", "largest intermediate", "peak live", "x best", "chosen by")]
    for index, order in enumerate(report["orders"]):
        mark = "*" if index == report["optimal"] else ""
        rows.append((f"{index}{mark}", _path_text(order["path"]), format_flops(order["flops"]),
                     _elements_text(order["largest_intermediate"], itemsize),
                     _elements_text(order["peak_live_elements"], itemsize),
                     f"{order['ratio_to_optimal']:.2f}", ", ".join(order["chosen_by"])))
    lines.append("")
    lines += _table(rows)
    lines.append("")
    rows = [("framework", "FLOPs", "x best", "order", "path", "call")]
    for name, model in report["frameworks"].items():
        if model["flops"] is None:
            rows.append((name, "-", "-", "-", "-", f"not modelled: {model['refused']}"))
            continue
        order = "-" if model["order"] is None else str(model["order"])
        rows.append((name, format_flops(model["flops"]), f"{model['ratio_to_optimal']:.2f}", order,
                     _path_text(model["path"]), model["call"]))
    lines += _table(rows)
    return "\n".join(lines) + "\n"


def _table(rows) -> list[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def run(args) -> int:
    try:
        dtype = normalize_dtype(args.dtype, "--dtype")
    except EstimatorError as error:
        raise ConfigError("--dtype", "", error.reason) from None
    if args.shapes is not None and args.dim:
        raise ConfigError("--dim", "", "give operand sizes either with --shapes or with --dim, not both")
    if args.shapes is None and not args.dim:
        raise ConfigError("--shapes", "", "operand sizes are needed: --shapes AxB,CxD,... or --dim LETTER=SIZE ...")
    memory_limit = parse_memory_limit(args.memory_limit, dtype.bytes)
    try:
        if args.shapes is not None:
            shapes = parse_shapes(args.shapes)
        else:
            shapes = [list(shape) for shape in network_from_dims(args.subscripts, parse_dims(args.dim)).shapes]
        report = plan_report(args.subscripts, shapes, dtype.name, minimize=args.minimize, memory_limit=memory_limit)
    except CountOverflow as error:
        raise ConfigError(args.subscripts, error.field, error.reason) from None
    except EstimatorError as error:
        raise ConfigError(args.subscripts, error.field, error.reason) from None
    if args.format == "json":
        text = json.dumps(report, indent=2) + "\n"
    else:
        text = render_text(report, dtype.bytes)
    write_output(text, args.output)
    return 0
