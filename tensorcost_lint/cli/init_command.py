"""`tensorcost init [PATHS]`: write a starter tensorcost.yaml (or `[tool.tensorcost]` in
pyproject.toml) listing the dims the code names; never overwrites without `--force`."""

from __future__ import annotations

import os
import sys

from ..safe_io.atomic_write import write_atomically
from ..config.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def add_arguments(parser) -> None:
    parser.add_argument("paths", nargs="*", default=None, metavar="PATHS", help="files or directories to read (default: .)")
    parser.add_argument("--pyproject", action="store_true", help="write [tool.tensorcost] into pyproject.toml instead")
    parser.add_argument("--from-hf", metavar="CONFIG_JSON", help="fill sizes from a Hugging Face config.json's integer fields")
    parser.add_argument("--force", action="store_true", help="overwrite an existing tensorcost config")
    parser.add_argument("--output", metavar="FILE",
                        help="where to write (default ./tensorcost.yaml, or ./pyproject.toml with --pyproject)")


def _write_atomically(path: str, text: str) -> None:
    write_atomically(path, text.encode("utf-8"))


def _models_supported() -> bool:
    from ..config.project_config import parse_config

    try:
        parse_config({"models": {}}, "(probe)", None)
    except ConfigError:
        return False
    return True


def _validate(document, source: str, directory: str) -> None:
    """The starter must load as written: refuse to write one the loader would refuse."""
    from pathlib import Path

    from ..config.project_config import parse_config

    parse_config(document, source, Path(directory))


def run(args) -> int:
    from ..config.safe_yaml import load_yaml_text
    from ..driver.dim_census import dim_census
    from ..driver.starter_config import read_hf_sizes, toml_table_text, without_tensorcost_tables, yaml_text
    from .check_command import check_paths

    paths = args.paths or ["."]
    check_paths(paths)
    sizes = read_hf_sizes(args.from_hf) if args.from_hf else {}
    census = dim_census(paths)
    target = args.output or ("pyproject.toml" if args.pyproject else "tensorcost.yaml")
    directory = os.path.dirname(os.path.abspath(target))
    supported = _models_supported()
    if target.endswith(".toml"):
        existing = ""
        if os.path.exists(target):
            with open(target, encoding="utf-8-sig") as stream:
                existing = stream.read(1 << 20)
            try:
                has_table = "tensorcost" in tomllib.loads(existing).get("tool", {})
            except tomllib.TOMLDecodeError as error:
                raise ConfigError(target, "", f"invalid TOML: {error}") from None
            if has_table and not args.force:
                raise ConfigError(target, "tool.tensorcost", "already exists; pass --force to replace it")
            existing = without_tensorcost_tables(existing)
        table = toml_table_text(census, sizes, args.from_hf, directory, supported)
        text = (existing.rstrip("\n") + "\n\n" if existing.strip() else "") + table
        _validate(tomllib.loads(text)["tool"]["tensorcost"], f"{target} [tool.tensorcost]", directory)
    else:
        if os.path.exists(target) and not args.force:
            raise ConfigError(target, "", "already exists; pass --force to overwrite it")
        text = yaml_text(census, sizes, args.from_hf, directory, supported)
        _validate(load_yaml_text(text, target), target, directory)
    _write_atomically(target, text)
    sized = sum(1 for name in census.dims if name in sizes)
    files = f"{census.files} file" + ("" if census.files == 1 else "s")
    print(f"Wrote {target}: {len(census.dims)} dims from {files} "
          f"({sized} sized{' from ' + os.path.basename(args.from_hf) if args.from_hf else ''}, "
          f"{len(census.dims) - sized} to fill in)")
    return 0
