"""The flake8 plugin (entry point `TCL`): flake8 in, `lint_source` out, nothing in between.

- The source comes only from flake8's `lines`, so `flake8 -` (editors pipe the buffer with
  `--stdin-display-name`) checks what is in the buffer, not what is on disk.
- Columns handed to flake8 are 0-based; flake8 adds one when it prints.
- The engine runs with `noqa=False`: flake8's own `# noqa` handling (and `--disable-noqa`) decides.
- Selection: the engine enables what the project's tensorcost config enables, plus the default-off
  ledger codes that flake8's `--select`/`--extend-select` name exactly (`TCL501`; never a prefix
  such as `TCL`, which flake8 would let through its default ignore). flake8's select/ignore then
  decides what is shown, as for any plugin. A `TCL…` selector that matches no code is a usage
  error (one line, exit 2), as in ruff: a typo must not switch the checks off silently.
- A relative `tensorcost-config` from flake8's config file resolves against that file's directory
  (flake8 leaves a bare name relative to the working directory).
- A broken tensorcost.yaml (or a bad `--tensorcost-*` value) never crashes flake8: each checked
  file gets one TCL900 finding at 1:1 naming the file, key and reason, and no other TCL finding.
- Under `--jobs` each worker process builds its own config resolver; no state crosses files
  except that per-process cache of parsed config files.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from .. import __version__
from ..config.errors import ConfigError
from ..config.flake8_settings import find_flake8_file, resolve_against
from ..config.config_discovery import ConfigResolver, Overrides, parse_dim_override
from ..rules.selection import RULE_PREFIX, unknown_selector_reason
from ..driver.engine import SYNTAX_ERROR_CODE, lint_source
from ..rules import ALL_RULES
from .config_problems import resolve_config

DEFAULT_OFF_CODES = tuple(rule.code for rule in ALL_RULES if not rule.default_enabled)


def _flatten(values) -> list[str]:
    """flake8 hands a comma-list option as a list from a config file but as a list of lists when
    `append` is used on the command line; take either."""
    if values is None:
        return []
    if isinstance(values, str):
        return [part.strip() for part in values.split(",") if part.strip()]
    flat: list[str] = []
    for value in values:
        flat.extend(_flatten(value))
    return flat


def requested_default_off_codes(options) -> tuple[str, ...]:
    """Default-off codes the flake8 run names exactly (`--select TCL501`, `extend-select = TCL501`).
    A prefix (`--select TCL`) never turns the ledger on: flake8 would show it (an explicit select
    beats its default ignore) and fail CI on clean code with one info line per call site."""
    selectors = {str(s).strip().upper() for s in [*_flatten(getattr(options, "select", None) or []),
                                                   *_flatten(getattr(options, "extend_select", None) or [])]}
    return tuple(code for code in DEFAULT_OFF_CODES if code in selectors)


SELECTOR_OPTIONS = ("select", "extend_select", "ignore", "extend_ignore")


def unknown_tensorcost_selector(options) -> str | None:
    """The one-line complaint about the first `TCL…` selector in flake8's options that matches no
    code. Other plugins' codes (E, W, F, B, TC, …) are flake8's business."""
    for name in SELECTOR_OPTIONS:
        for selector in _flatten(getattr(options, name, None)):
            text = selector.strip().upper()
            if text.startswith(RULE_PREFIX):
                reason = unknown_selector_reason(text)
                if reason is not None:
                    return f"flake8: tensorcost: --{name.replace('_', '-')}: {reason}"
    return None


def flake8_config_file(options) -> str | None:
    if getattr(options, "isolated", False):
        return None
    return getattr(options, "config", None) or find_flake8_file(os.getcwd())


def tensorcost_config_path(options) -> str | None:
    """`--tensorcost-config`, with a bare relative name from flake8's config file resolved against
    that file's directory; one given on the command line stays relative to the working directory."""
    value = options.tensorcost_config or None
    if value is None or os.path.isabs(value) or any(a.startswith("--tensorcost-config") for a in sys.argv[1:]):
        return value
    config_file = flake8_config_file(options)  # flake8 made a value holding a `/` absolute already
    return value if config_file is None else resolve_against(value, os.path.dirname(os.path.abspath(config_file)))


def with_default_off_codes(config, requested=DEFAULT_OFF_CODES):
    """The project's selection plus the requested default-off codes it does not ignore."""
    extra = tuple(code for code in requested
                  if not any(ignored == "ALL" or code.startswith(ignored) for ignored in config.ignore))
    return replace(config, extend_select=config.extend_select + extra) if extra else config


class TensorCostChecker:
    name = "tensorcost"
    version = __version__

    # Class-level: set once per process by `parse_options` (flake8 calls it in every worker).
    _overrides: Overrides | None = None
    _option_error: ConfigError | None = None
    _resolver: ConfigResolver | None = None
    _requested: tuple = DEFAULT_OFF_CODES
    _configs: dict = {}

    def __init__(self, tree, lines, filename: str) -> None:
        # flake8's own stdlib tree: the engine selects the functions worth analysing on it and
        # builds their trees from it (analysis/ast_front.py), so the file is parsed once, by flake8.
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager) -> None:
        option_manager.add_option(
            "--tensorcost-config", metavar="FILE", default=None, parse_from_config=True, normalize_paths=True,
            help="tensorcost.yaml or pyproject.toml to use instead of discovering one from each file")
        option_manager.add_option(
            "--tensorcost-dim", metavar="NAME=SIZE", action="append", default=[], parse_from_config=True,
            comma_separated_list=True,
            help="declare or override a dim size, e.g. seq=8192 (repeatable or comma-separated)")
        option_manager.add_option(
            "--tensorcost-hardware", metavar="ID", default=None, parse_from_config=True,
            help="hardware evidence id for the roofline bound (shipped, e.g. h100-sxm, or from `evidence`)")
        option_manager.extend_default_ignore(list(DEFAULT_OFF_CODES))

    @classmethod
    def parse_options(cls, options) -> None:
        cls._resolver = None
        cls._option_error = None
        complaint = unknown_tensorcost_selector(options)
        if complaint is not None:  # flake8 answers its own bad options the same way: exit 2
            print(complaint, file=sys.stderr)
            raise SystemExit(2)
        try:
            dims = tuple(parse_dim_override(text, "--tensorcost-dim") for text in _flatten(options.tensorcost_dim))
        except ConfigError as error:
            cls._option_error, dims = error, ()
        cls._overrides = Overrides(
            config_file=tensorcost_config_path(options),
            dims=dims,
            hardware=options.tensorcost_hardware or None,
        )
        cls._requested = requested_default_off_codes(options)
        cls._configs = {}

    @classmethod
    def _config_for(cls, filename: str):
        if cls._option_error is not None:
            raise cls._option_error
        if cls._resolver is None:
            cls._resolver = ConfigResolver(cls._overrides or Overrides())
        config = cls._resolver.for_path(filename)
        key = id(config)  # one extended config per project config, not one per file
        if key not in cls._configs:
            cls._configs[key] = (config, with_default_off_codes(config, cls._requested))
        return cls._configs[key][1]

    def run(self):
        config, problem = resolve_config(self._config_for, self.filename)
        if config is None:
            findings = [problem]
        else:
            findings = lint_source("".join(self.lines), self.filename, config, noqa=False, tree=self.tree,
                                   front_end="ast").findings
        for finding in findings:
            if finding.code == SYNTAX_ERROR_CODE:  # flake8 reports E999 itself
                continue
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)
