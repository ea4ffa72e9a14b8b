"""The `tensorcost-*` settings flake8 reads from `setup.cfg`, `tox.ini` or `.flake8`, read the
same way by `tensorcost check`, so one project has one configuration whichever front end runs.

The file is found as flake8 finds it: walking up from the working directory to the first of
`setup.cfg`, `tox.ini`, `.flake8` (in that order) holding a `[flake8]` section, stopping at the
home directory. A relative `tensorcost-config` resolves against the directory of the file that
names it — flake8 itself leaves a bare name like `tensorcost.yaml` relative to the working
directory, which broke every run from a subdirectory.
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass

from .errors import ConfigError

FLAKE8_FILES = ("setup.cfg", "tox.ini", ".flake8")
MAX_SETTINGS_BYTES = 1 << 20


@dataclass(frozen=True)
class Flake8Settings:
    path: str  # the file that holds them
    config: str | None  # tensorcost-config, absolute
    dims: tuple[str, ...]  # tensorcost-dim entries, NAME=SIZE text
    hardware: str | None

    @property
    def directory(self) -> str:
        return os.path.dirname(self.path)


def _read_parser(path: str) -> configparser.RawConfigParser | None:
    parser = configparser.RawConfigParser()
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_SETTINGS_BYTES:
            return None
        parser.read(path, encoding="UTF-8")
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None  # flake8 skips an unparseable candidate the same way
    return parser


def find_flake8_file(start: str) -> str | None:
    """The file flake8 would read its settings from when run in `start`."""
    home = os.path.realpath(os.path.expanduser("~"))
    directory = os.path.abspath(start)
    while True:
        for name in FLAKE8_FILES:
            parser = _read_parser(os.path.join(directory, name))
            if parser is not None and ("flake8" in parser or "flake8:local-plugins" in parser):
                return os.path.join(directory, name)
        parent = os.path.dirname(directory)
        if parent == directory or os.path.realpath(parent) == home:
            return None
        directory = parent


def resolve_against(value: str, directory: str) -> str:
    return value if os.path.isabs(value) else os.path.normpath(os.path.join(directory, value))


def read_flake8_settings(start: str) -> Flake8Settings | None:
    path = find_flake8_file(start)
    if path is None:
        return None
    parser = _read_parser(path)
    section = parser["flake8"] if parser is not None and "flake8" in parser else {}
    config = (section.get("tensorcost-config") or section.get("tensorcost_config") or "").strip() or None
    dims_text = section.get("tensorcost-dim") or section.get("tensorcost_dim") or ""
    hardware = (section.get("tensorcost-hardware") or section.get("tensorcost_hardware") or "").strip() or None
    dims = tuple(part.strip() for part in dims_text.replace("\n", ",").split(",") if part.strip())
    if config is not None:
        config = resolve_against(config, os.path.dirname(path))
        if not os.path.isfile(config):
            raise ConfigError(path, "[flake8] tensorcost-config", f"no such file: {config}")
    return Flake8Settings(path, config, dims, hardware)
