"""The documentation site builds with `mkdocs build --strict` (no broken link or anchor, no page
left out of the nav: mkdocs.yml's `validation` makes each a warning, and --strict a failure), and
every page under docs/ is in the nav — checked here too, so the failure names the page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _nav_pages(items) -> list[str]:
    pages = []
    for item in items:
        if isinstance(item, str):
            pages.append(item)
        elif isinstance(item, dict):
            for value in item.values():
                pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def _config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def test_every_page_under_docs_is_in_the_nav_and_every_nav_entry_exists():
    nav = _nav_pages(_config()["nav"])
    pages = sorted(path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md"))
    missing = [page for page in pages if page not in nav]
    assert not missing, f"pages not in mkdocs.yml's nav (add each to its section): {missing}"
    assert not [page for page in nav if not (DOCS / page).is_file()], "nav entries without a page"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr[-4000:]
    site = tmp_path / "site"
    assert (site / "index.html").is_file() and (site / "rules" / "TCL401" / "index.html").is_file()
    assert (site / "schemas" / "check-report.schema.json").is_file()
