"""Contract 7a `packages_read`: each installed package whose source the run read, with its version
(`{"transformers": "5.24.0"}`), so a baseline notices an upgrade. Read from the package's
`*.dist-info` in the same site-packages folder as the files (its METADATA `Version:` line, its
`top_level.txt` for the import names) — as text, nothing imported."""

from __future__ import annotations

from pathlib import Path

_SITE_FOLDERS = ("site-packages", "dist-packages")
MAX_DIST_INFO = 5_000  # dist-info folders listed per site-packages: a bound on a hostile folder
MAX_METADATA_BYTES = 256 * 1024


def packages_read(files) -> dict:
    """import name -> version ("unknown" when no dist-info names it) of every package read."""
    by_site: dict = {}
    for file in files:
        parts = Path(file).parts
        for index in range(len(parts) - 2, -1, -1):
            if parts[index] in _SITE_FOLDERS:
                name = parts[index + 1]
                name = name[:-3] if name.endswith(".py") else name
                by_site.setdefault(Path(*parts[: index + 1]), set()).add(name)
                break
    found = {}
    for site, names in by_site.items():
        versions = _versions(site)
        for name in sorted(names):
            found[name] = versions.get(name, "unknown")
    return dict(sorted(found.items()))


# site folder -> (its mtime, import name -> version): read once per process while the folder is
# unchanged (an install or upgrade rewrites it), not at every model run a `check` makes
_READ: dict = {}


def _versions(site: Path) -> dict:
    try:
        stamp = site.stat().st_mtime_ns
    except OSError:
        return {}
    held = _READ.get(site)
    if held is None or held[0] != stamp:
        held = _READ[site] = (stamp, _read_versions(site))
    return held[1]


def _read_versions(site: Path) -> dict:
    versions = {}
    try:
        folders = sorted(p for p in site.iterdir() if p.name.endswith(".dist-info"))[:MAX_DIST_INFO]
    except OSError:
        return versions
    for folder in folders:
        distribution, version = _metadata(folder / "METADATA")
        if version is None:
            continue
        names = _lines(folder / "top_level.txt") or [distribution.replace("-", "_").replace(".", "_").lower()]
        for name in names:
            versions.setdefault(name, version)
    return versions


def _metadata(path: Path):
    name = version = None
    for line in _lines(path, stop_at_blank=True):
        if line.startswith("Name:"):
            name = line[5:].strip()
        elif line.startswith("Version:"):
            version = line[8:].strip()
    return name or "", version


def _lines(path: Path, stop_at_blank: bool = False) -> list:
    try:
        with open(path, "rb") as handle:
            text = handle.read(MAX_METADATA_BYTES).decode("utf-8", "replace")
    except OSError:
        return []
    lines = []
    for line in text.splitlines():
        if stop_at_blank and not line.strip():
            break  # the headers end at the first blank line; the long description follows
        if line.strip():
            lines.append(line.strip())
    return lines
