"""Entry point of the `tensorcost` console script.

Usage and config errors exit 2 with exactly one line on stderr, never a traceback: CI logs and
pre-commit output show that line to people who did not write the tool.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import re
import sys

from .. import __version__
from ..config.errors import ConfigError
from ..safe_io.printable import printable

# name -> module implementing add_arguments(parser) and run(args) -> int
COMMANDS = {
    "check": ("check_command", "lint Python files for tensor cost and shape findings"),
    "estimate": ("estimate_command", "print the checked cost of a plan file (Contract 4)"),
    "plan": ("plan_command", "every contraction order of an einsum, and what each framework runs"),
    "explain": ("explain_command", "print the documentation page of a rule code"),
    "report": ("report_command", "per-site cost table and a roofline picture"),
    "calibrate": ("calibrate_command", "measure this machine and write hardware evidence"),
    "measure": ("measure_command", "run the planned operations on synthetic data and compare with the bound"),
    "lsp": ("lsp_command", "run the language server over stdio"),
    "baseline": ("baseline_command", "write every resolved site's exact cost, for `check --baseline` (Contract 8)"),
    "model": ("model_command", "whole-model FLOPs from an entry point (Contract 7)"),
    "fit": ("fit_command", "the largest batch (or other dim) whose memory fits a device (Contract 9)"),
    "init": ("init_command", "write a starter tensorcost.yaml naming the dims the code uses"),
}


class UsageError(Exception):
    pass


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):  # noqa: D401 - argparse API
        raise UsageError(f"{self.prog}: error: {message}")


# A value a user's file or flag gives is echoed in its error whole up to this many characters; a
# longer one (a 100 KB input spec, mode or path) by its start, its end and its length.
_LONGEST_ECHO = 300
_LONG_WORD = re.compile(r"\S{%d,}" % (_LONGEST_ECHO + 1))


def one_line(message: str) -> str:
    """Error output is one line even when a path or value the user gave holds a newline, and shows
    ESC, bidi overrides and other controls as escapes (they would recolour or rewrite the terminal);
    a run of text too long to read is cut to its ends and its length."""
    return _LONG_WORD.sub(_shortened, printable(message))


def _shortened(match) -> str:
    word = match.group(0)
    return f"{word[:120]}...{word[-60:]} ({len(word):,} characters)"


def build_parser(selected: str | None = None) -> OneLineParser:
    """Only the selected sub-command's module is imported: `tensorcost check` must not pay for
    the language server's or the plotter's imports."""
    parser = OneLineParser(prog="tensorcost", description="Static cost analysis of tensor programs.")
    parser.add_argument("--version", action="version", version=f"tensorcost {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    subparsers.required = True
    for name, (module_name, help_text) in COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        if name == selected:
            module = importlib.import_module(f"{__package__}.{module_name}")
            module.add_arguments(sub)
            sub.set_defaults(_module=module)
    return parser


def _selected_command(argv: list[str]) -> str | None:
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


# The analysis allocates millions of small, mostly acyclic objects (trees, facts, records) that live
# until the report is written; at CPython's default thresholds the cyclic collector rescans them
# often enough to be a third of a large file's time (33,000 functions: 6.5 s, 4.6 s with these).
# Memory is unchanged: reference counting frees nearly all of it, and cycles are still collected.
# The older generations are where the time went: a collection of the middle one rescans everything
# that survived a young one, and nearly everything does (a 100,000-statement forward: 17.7 s at
# (50_000, 50, 50), 14.9 s at these, 14.3 s with no collector). Cycles that die young, the usual
# kind, are still found by the young collections; older ones wait for the 25 millionth allocation.
_COLLECTION_THRESHOLDS = (50_000, 500, 10)


def main(argv: list[str] | None = None) -> int:
    """`tensorcost ARGV` (default: this process's command line, as the console script runs it)."""
    own_process = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    thresholds = gc.get_threshold()
    gc.set_threshold(*_COLLECTION_THRESHOLDS)
    try:
        for text in argv:
            if "\0" in str(text):  # no command line holds one; a path with one opens nothing, anywhere
                raise UsageError(f"tensorcost: error: an argument holds a NUL byte: {text!r}")
        args = build_parser(_selected_command(argv)).parse_args(argv)
        return args._module.run(args)
    except UsageError as error:
        print(one_line(str(error)), file=sys.stderr)
        return 2
    except ConfigError as error:
        print(one_line(f"tensorcost: error: {error}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tensorcost: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as error:  # writing the report failed (disk full, closed terminal)
        print(one_line(f"tensorcost: error: cannot write output: {error.strerror or error}"), file=sys.stderr)
        return 2
    finally:
        gc.set_threshold(*thresholds)  # a host calling main() in process keeps its own
        if own_process:
            # the process exits next, and its last collection would walk every object the run
            # left (a whole-model run and its hooks refer to each other: only the collector frees
            # them): 1.6 s of a 40,000-statement forward's 9.8. Frozen, the operating system frees
            # them. A host that passes its own arguments keeps its collector whole.
            gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
