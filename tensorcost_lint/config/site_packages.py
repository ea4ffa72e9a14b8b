"""Contract 7a `site_packages: auto | PATH | none`: the installed packages' folders whose source a
whole-model run may read (as text: nothing is imported) when the model's code imports them.

`none` (the default) keeps a run confined to the project and `source_roots` (a cloned
repository's imports name nothing outside it); `auto` is the site folders of the environment
tensorcost itself runs in, found from `sys.path` and `sysconfig` — no import and no `find_spec`
of anything, so a package's import-time code never runs; a PATH is one site folder.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

SITE_FOLDER_NAMES = ("site-packages", "dist-packages")
CHOICES = ("auto", "none")


def active_site_folders() -> tuple[str, ...]:
    """The active environment's site folders (real paths), in `sys.path` order."""
    candidates = [entry for entry in sys.path if entry and Path(entry).name in SITE_FOLDER_NAMES]
    for key in ("purelib", "platlib"):
        try:
            candidates.append(sysconfig.get_paths()[key])
        except (KeyError, ValueError):  # pragma: no cover - an unusual interpreter layout
            continue
    return tuple(dict.fromkeys(os.path.realpath(c) for c in candidates if os.path.isdir(c)))


def parse_site_packages(reader, root: Path | None) -> tuple[str, tuple[str, ...]]:
    """(the value as written, the folders it means) of the top-level `site_packages` key."""
    raw = reader.raw("site_packages")
    if raw is None or raw == "none":
        return "none", ()
    if not isinstance(raw, str) or not raw.strip():
        raise reader.error("site_packages", f"expected auto, none or a directory path, got {raw!r}")
    if raw == "auto":
        return "auto", active_site_folders()
    path = Path(raw)
    if not path.is_absolute() and root is not None:
        path = root / path
    if not path.is_dir():
        raise reader.error("site_packages", f"{raw}: not a directory (expected auto, none or a site folder)")
    return raw, (os.path.realpath(path),)
