"""Which files a run may read: those inside the project root (the repository holding the config) or
a directory the config lists in `source_roots`.

A cloned repository is not trusted to name files: `dims_from: /etc/shadow`, `entry: ../../x.py`, a
symlink to a secret, or `from ...outside import helper` would otherwise make tensorcost read (and a
message or a CI annotation echo) what lies outside it. Every path is checked by its real location
(symlinks followed), by this one check, before it is opened.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


class OutsideProject(OSError):
    """A path outside every allowed root; its message names the path as given and the rule."""


def repository_root(directory: Path | str) -> Path:
    """The nearest directory at or above `directory` holding `.git`; `directory` itself if none."""
    start = Path(os.path.abspath(directory))
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


@dataclass(frozen=True)
class Confinement:
    roots: tuple[str, ...]  # real paths (symlinks resolved) of the allowed directories

    @classmethod
    def of(cls, *directories) -> "Confinement":
        return cls(tuple(dict.fromkeys(os.path.realpath(d) for d in directories)))

    def widened(self, *directories) -> "Confinement":
        return Confinement.of(*self.roots, *directories)

    def allows(self, path: Path | str) -> bool:
        real = os.path.realpath(path)
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots)

    def check(self, path: Path | str, shown: str | None = None) -> None:
        """Raise OutsideProject unless `path` lies inside an allowed root."""
        if not self.allows(path):
            raise OutsideProject(f"{shown or path}: outside the project root {self.roots[0]} (reading it needs "
                                 "its directory in `source_roots`)")
