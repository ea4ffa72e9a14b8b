"""`tensorcost fit NAME --memory 80GB [--dim batch]` (Contract 9): the largest value of a dim whose
memory fits, found by running the whole-model analysis at each value it tries (never by scaling a
figure): doubling from 1 until it does not fit, then halving the gap. Exit 0 with the value, 1 when
even 1 does not fit, 2 for a usage or config error.

What "fits" compares: `totals.memory.peak` when the run computes it (memory_peak's liveness model);
where it does not (`totals.memory.unknown.peak` says why), its `peak_lower_bound`, and the answer is
then an upper bound (the value printed certainly does not fit at +1; it may not fit at the value
itself either), said in the output."""

from __future__ import annotations

from pathlib import Path

from estimator.units import format_bytes

from ..config.byte_sizes import parse_byte_size
from ..config.errors import ConfigError
from ..config.config_discovery import ConfigResolver, Overrides, parse_dim_override
from .model_command import analyse_entries
from .output import write_output

MAX_VALUE = 2**62  # the search stops here: larger sizes overflow exact counts long before


def add_arguments(parser) -> None:
    parser.add_argument("name", metavar="NAME", help="a model configured under `models:`")
    parser.add_argument("--memory", required=True, metavar="SIZE", help="the device memory, e.g. 80GB or 80GiB")
    parser.add_argument("--dim", action="append", default=[], metavar="DIM | NAME=SIZE",
                        help="the dim to search (default: batch); NAME=SIZE declares another dim's size (repeatable)")
    parser.add_argument("--config", metavar="FILE", help="config file (default: discovered from the current directory)")
    parser.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")


class _Search:
    """The model's memory at each value of the dim, one whole-model run per value, remembered."""

    def __init__(self, args, memory_bytes: int) -> None:
        self.args, self.memory_bytes = args, memory_bytes
        self.runs: dict = {}  # value -> (bytes needed, exact, memory record)
        self.fixed = tuple(parse_dim_override(text) for text in args.dim if "=" in text)
        self.dim = args.search

    def needed(self, value: int):
        if value not in self.runs:
            dims = (*self.fixed, (self.dim, value))
            config = ConfigResolver(Overrides(config_file=self.args.config, dims=dims)).for_path(Path.cwd())
            entry = {e.name: e for e in config.models}.get(self.args.name)
            if entry is None:
                raise ConfigError(config.source, f"models.{self.args.name}", "no such model")
            memory = analyse_entries([entry], config)[0].memory
            record = memory.as_json() if memory is not None else {}
            peak, bound = record.get("peak"), record.get("peak_lower_bound")
            if peak is None and bound is None:
                why = (record.get("unknown") or {}).get("peak", "not computed")
                raise ConfigError(f"models.{self.args.name}", "memory", f"not known at {self.dim}={value}: {why}")
            self.runs[value] = (peak if peak is not None else bound, peak is not None, record)
        return self.runs[value]

    def fits(self, value: int) -> bool:
        return self.needed(value)[0] <= self.memory_bytes


def _largest(search: _Search) -> int | None:
    """The largest value that fits (None when 1 does not), assuming memory grows with the dim."""
    if not search.fits(1):
        return None
    low, high = 1, 2
    while high <= MAX_VALUE and search.fits(high):
        low, high = high, high * 2
    if high > MAX_VALUE:
        return low
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if search.fits(middle) else (low, middle)
    return low


def _line(search: _Search, value: int) -> str:
    needed, exact, record = search.needed(value)
    parts = ", ".join(f"{name.replace('_', ' ')} {format_bytes(record[name])}"
                      for name in ("parameters", "gradients", "optimizer_states", "master_weights", "activations",
                                   "kv_cache") if record.get(name))
    what = "peak" if exact else "at least (peak_lower_bound)"
    verdict = "fits" if needed <= search.memory_bytes else "does not fit"
    return f"  {search.dim}={value}: {needed} B ({format_bytes(needed)}) {what}: {parts} — {verdict}"


def run(args) -> int:
    try:
        memory_bytes = parse_byte_size(args.memory)
    except ValueError as error:
        raise ConfigError("--memory", args.memory, str(error)) from None
    searched = [text for text in args.dim if "=" not in text]
    if len(searched) > 1 or not all(text.strip().isidentifier() for text in searched):
        raise ConfigError("--dim", " ".join(searched), "name one dim to search, e.g. --dim batch")
    args.search = searched[0].strip() if searched else "batch"
    search = _Search(args, memory_bytes)
    largest = _largest(search)
    exact = all(exact for _, exact, _ in search.runs.values())
    shown = format_bytes(memory_bytes)
    if largest is None:
        lines = [f"model {args.name}: does not fit {shown} even at {args.search}=1", _line(search, 1)]
        write_output("\n".join(lines) + "\n", args.output)
        return 1
    if largest >= MAX_VALUE or search.needed(1)[0] == search.needed(largest)[0]:
        raise ConfigError("--dim", args.search, f"the model's memory does not grow with {args.search}: is it a dim the "
                                             "model reads?")
    head = f"model {args.name}: largest {args.search} that fits {shown}: {largest}"
    if not exact:
        head += (" (at most: the peak of the step is not known here, so this compares its lower bound; "
                 "see totals.memory.unknown.peak and docs/memory.md)")
    lines = [head, _line(search, largest), _line(search, largest + 1)]
    write_output("\n".join(lines) + "\n", args.output)
    return 0
