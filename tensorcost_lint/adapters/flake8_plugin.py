"""The flake8 plugin (entry point `TCL`): flake8 in, `lint_source` out, nothing in between.

- The source comes only from flake8's `lines`, so `flake8 -` (editors pipe the buffer with
  `--stdin-display-name`) checks what is in the buffer, not what is on disk.
- Columns handed to flake8 are 0-based; flake8 adds one when it prints.
- The engine runs with `noqa=False`: flake8's own `# noqa` handling (and `--disable-noqa`) decides.
- Selection: the engine enables what the project's tensorcost config enables, plus the default-off
  ledger codes, which flake8 hides through `extend_default_ignore` until `--select`/`--extend-select`
  names them. flake8's select/ignore then decides what is shown, as for any plugin.
- A broken tensorcost.yaml (or a bad `--tensorcost-*` value) never crashes flake8: each checked
  file gets one TCL900 finding at 1:1 naming the file, key and reason, and no other TCL finding.
- Under `--jobs` each worker process builds its own config resolver; no state crosses files
  except that per-process cache of parsed config files.
"""

from __future__ import annotations

from dataclasses import replace

from .. import __version__
from ..config.errors import ConfigError
from ..config.project_config import ConfigResolver, Overrides, parse_dim_override
from ..engine import SYNTAX_ERROR_CODE, lint_source
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
    """Default-off codes the flake8 run selects by name (`--select TCL501`, `extend-select = TCL5`).
    flake8 hides them otherwise (extend_default_ignore), so computing them for every site — the
    ledger needs every site's position and text — would be work nobody sees."""
    selectors = [str(s).strip().upper() for s in [*_flatten(getattr(options, "select", None) or []),
                                                   *_flatten(getattr(options, "extend_select", None) or [])]]
    return tuple(code for code in DEFAULT_OFF_CODES
                 if any(s and code.startswith(s) for s in selectors))  # explicit --select TCL beats a default ignore


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
        # flake8's own stdlib tree: the engine selects the functions worth a LibCST parse on it,
        # so the file is not parsed twice by `ast`.
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
        try:
            dims = tuple(parse_dim_override(text, "--tensorcost-dim") for text in _flatten(options.tensorcost_dim))
        except ConfigError as error:
            cls._option_error, dims = error, ()
        cls._overrides = Overrides(
            config_file=options.tensorcost_config or None,
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
            findings = lint_source("".join(self.lines), self.filename, config, noqa=False, tree=self.tree).findings
        for finding in findings:
            if finding.code == SYNTAX_ERROR_CODE:  # flake8 reports E999 itself
                continue
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)
