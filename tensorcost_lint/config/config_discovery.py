"""Which configuration governs a checked file (Contract 2): the nearest `tensorcost.yaml`, or
`pyproject.toml` holding `[tool.tensorcost]`, walking up from the file and stopping at the
repository root; the file loaded (TOML or YAML, the same keys in both); and the CLI, flake8 or
editor overrides applied on top, the highest precedence (`--dim`, `--hardware`, `--select`, ...).

Apart from project_config.py, which turns one document into a checked ProjectConfig: this module
is every front end's way to a config for a path — one discovery per directory, cached by
ConfigResolver — and the only one that touches the file system to find it."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from ..safe_io.bounded_read import TooLarge, read_capped
from ..hardware.evidence_files import resolve_device
from .errors import ConfigError
from .fields import _short
from .project_config import ProjectConfig, parse_config
from .safe_yaml import MAX_FILE_BYTES, load_yaml_text, read_text_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def load_config_file(path: Path | str) -> ProjectConfig:
    path = Path(path)
    source = str(path)
    text = read_text_file(path, source)
    if path.suffix == ".toml":
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(source, "", f"invalid TOML: {error}") from None
        except ValueError:  # int() past Python's digit limit, raised from inside the parser
            raise ConfigError(source, "", "invalid TOML: an integer with too many digits") from None
        table = document.get("tool", {}).get("tensorcost")
        if table is None:
            raise ConfigError(source, "tool.tensorcost", "no [tool.tensorcost] table in this file")
        return parse_config(table, source + " [tool.tensorcost]", _absolute(path.parent))
    return parse_config(load_yaml_text(text, source), source, _absolute(path.parent))


def _absolute(path) -> Path:
    """Absolute without following symlinks: a linked file belongs to the directory it is linked
    from (whose config governs it), and a link loop must not raise."""
    return Path(os.path.abspath(path))


def _holds_tensorcost_table(path: Path) -> bool:
    try:
        text = read_capped(path, MAX_FILE_BYTES).decode("utf-8-sig")
    except TooLarge:
        return True  # loading it then says why it is refused, in one line
    except (OSError, UnicodeDecodeError):
        return False
    return "[tool.tensorcost" in text


def find_config_file(start: Path) -> Path | None:
    """Nearest config walking up from `start`, stopping at the repository root (a `.git` dir)."""
    directory = start if start.is_dir() else start.parent
    directory = _absolute(directory)
    for candidate in (directory, *directory.parents):
        yaml_file = candidate / "tensorcost.yaml"
        if yaml_file.is_file():
            return yaml_file
        toml_file = candidate / "pyproject.toml"
        if toml_file.is_file() and _holds_tensorcost_table(toml_file):
            return toml_file
        if (candidate / ".git").exists():
            return None
    return None


@dataclass(frozen=True)
class Overrides:
    """CLI flags (or flake8/LSP options) that override the file: the highest precedence."""

    config_file: str | None = None
    dims: tuple[tuple[str, int], ...] = ()
    hardware: str | None = None
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] | None = None
    per_file_ignores: tuple = ()  # (base directory, glob, codes), after the file's own
    extend_exclude: tuple[str, ...] = ()

    def apply(self, config: ProjectConfig) -> ProjectConfig:
        changes: dict = {}
        if self.dims:
            changes["cli_dims"] = {**config.cli_dims, **dict(self.dims)}
        if self.hardware:
            resolve_device(self.hardware, config.devices, "--hardware", "")
            changes["hardware_id"] = self.hardware
        if self.select is not None:
            changes["select"] = self.select
        if self.extend_select:
            changes["extend_select"] = config.extend_select + self.extend_select
        if self.ignore is not None:
            changes["ignore"] = config.ignore + self.ignore
        if self.per_file_ignores:
            changes["per_file_ignores"] = config.per_file_ignores + self.per_file_ignores
        if self.extend_exclude:
            changes["exclude"] = config.exclude + self.extend_exclude
        return replace(config, **changes) if changes else config


class ConfigResolver:
    """Finds and caches the config for each checked file (one discovery per directory)."""

    def __init__(self, overrides: Overrides = Overrides()) -> None:
        self.overrides = overrides
        self._by_directory: dict[Path, ProjectConfig] = {}
        self._by_file: dict[Path, ProjectConfig] = {}
        self._explicit: ProjectConfig | None = None
        if overrides.config_file:
            self._explicit = overrides.apply(load_config_file(overrides.config_file))

    def for_path(self, path: Path | str) -> ProjectConfig:
        if self._explicit is not None:
            return self._explicit
        directory = _absolute(path)
        directory = directory if directory.is_dir() else directory.parent
        if directory not in self._by_directory:
            found = find_config_file(directory)
            if found is None:
                config = self.overrides.apply(ProjectConfig())
            else:
                found = _absolute(found)
                if found not in self._by_file:
                    self._by_file[found] = self.overrides.apply(load_config_file(found))
                config = self._by_file[found]
            self._by_directory[directory] = config
        return self._by_directory[directory]


def parse_dim_override(text: str, flag: str = "--dim") -> tuple[str, int]:
    name, sep, value = text.partition("=")
    name = name.strip(" \t")  # spaces only: a control character in a name is refused, not cleaned
    if not sep or not name.isidentifier():
        raise ConfigError(flag, text, "expected NAME=SIZE, e.g. seq=8192")
    try:
        size = int(value.strip().replace("_", ""))
    except ValueError:
        raise ConfigError(flag, _short(text), f"size must be a positive integer, got {_short(repr(value))}") from None
    if size <= 0 or size > 2**63 - 1:
        raise ConfigError(flag, _short(text), f"size must be a positive integer below 2**63, got {_short(size)}")
    return name, size
