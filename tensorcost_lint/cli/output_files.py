"""Writing a report to a file the user named (`--output`, `--html`, `--roofline`): atomically, and
never over a file the run itself reads.

`check --output m.py m.py` used to replace the source it had just analysed with its report, and a
write that failed half-way left the previous report truncated. Now the new content is swapped in
whole (`atomic_write`), and a target that is an analysed file or a config file in use is refused
with exit 2 before anything is written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..safe_io.atomic_write import write_atomically
from ..config.errors import ConfigError


def files_in_use(report, resolver, *, extra=()) -> list[tuple[str, str]]:
    """(path, what it is) for every file this run read: analysed sources, the config files that
    govern them, and `extra` (e.g. `--evidence` files) given as (path, what) pairs."""
    from ..config.config_discovery import find_config_file

    used = [(result.path, "an analysed source file") for result in report.results]
    config_file = getattr(getattr(resolver, "overrides", None), "config_file", None)
    if config_file:
        used.append((config_file, "the config file in use"))
    else:
        directories = {os.path.dirname(os.path.abspath(result.path)) for result in report.results}
        found = {find_config_file(Path(directory)) for directory in sorted(directories)}
        used.extend((str(path), "the config file in use") for path in sorted(found - {None}, key=str))
    used.extend(extra)
    return used


def refuse_if_in_use(path: str, flag: str, protected=()):
    """A ConfigError when `path` is (or links to) one of `protected`; else its stat, None if absent.
    Callers with costly output to make call it first, so a refusal costs nothing."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ConfigError(path, flag, f"cannot write: {error.strerror or error}") from None
    for used, what in protected:
        try:
            same = os.path.samefile(path, used)
        except OSError:
            continue
        if same:
            raise ConfigError(path, flag, f"refusing to overwrite {what}")
    return info


def write_file(path: str, data, flag: str, protected=()) -> None:
    """Write `data` to `path` for `flag`; a ConfigError (exit 2, one line) when `path` is one of
    `protected` ((path, what) pairs) or cannot be written. A FIFO or device (`/dev/stdout`) is
    written as a stream; a regular file is replaced whole or not at all. `data` is bytes, or a
    function that writes them to the binary stream it is given (a report written as it is made)."""
    info = refuse_if_in_use(path, flag, protected)
    try:
        if info is not None and not stat.S_ISREG(info.st_mode):
            with open(path, "wb") as stream:
                stream.write(data) if isinstance(data, bytes) else data(stream)
        else:
            write_atomically(os.path.realpath(path), data)  # a link to a report: its target is updated
    except OSError as error:
        raise ConfigError(path, flag, f"cannot write: {error.strerror or error}") from None
