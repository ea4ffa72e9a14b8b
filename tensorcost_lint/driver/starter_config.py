"""The text of a starter config (`tensorcost init`): every dim the code names, sized where a
Hugging Face config.json knows the size, commented out where only the user does.

Unknown sizes are written as comments, not as `null`: the loader refuses a dim without a size,
and a starter file must load as written (`tensorcost check` right after `init` works, and its
summary says how many call sites still wait for a size). Contract 7's `models:` entry is written
as a commented block for the same reason: this version's loader does not read `models:` yet.
"""

from __future__ import annotations

import json
import os
import re

from ..safe_io.bounded_read import read_capped
from ..config.errors import ConfigError

MAX_HF_CONFIG_BYTES = 1 << 20
_YAML_SPECIAL = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null", "~"})
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def read_hf_sizes(path: str) -> dict[str, int]:
    """The positive integer top-level fields of a Hugging Face config.json (each may be a dim)."""
    try:
        raw = read_capped(path, MAX_HF_CONFIG_BYTES)
    except OSError as error:
        raise ConfigError(path, "--from-hf", f"cannot read: {error.strerror or error}") from None
    try:
        document = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ConfigError(path, "--from-hf", f"not JSON: {error}") from None
    if not isinstance(document, dict):
        raise ConfigError(path, "--from-hf", "expected a JSON object (a Hugging Face config.json)")
    return {key: value for key, value in document.items()
            if isinstance(key, str) and key.isidentifier() and type(value) is int and 1 <= value <= 2**63 - 1}


def hf_model_name(path: str) -> str:
    try:
        document = json.loads(read_capped(path, MAX_HF_CONFIG_BYTES).decode("utf-8-sig"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return "model"
    name = document.get("model_type") if isinstance(document, dict) else None
    return name if isinstance(name, str) and re.fullmatch(r"[\w.-]{1,64}", name) else "model"


def _uses(use) -> str:
    kinds = ", ".join(sorted(use.kinds))
    more = f" ({use.count} uses)" if use.count > 1 else ""
    return f"{kinds} at {use.first}{more}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _yaml_key(name: str) -> str:
    return name if _BARE.match(name) and name.lower() not in _YAML_SPECIAL else json.dumps(name)


def _toml_key(name: str) -> str:
    return name if _BARE.match(name) else json.dumps(name)


def dim_lines(census, sizes: dict[str, int], hf_label: str | None, key, separator: str, indent: str) -> list[str]:
    lines = []
    for name, use in census.dims.items():
        where = _one_line(_uses(use))
        if name in sizes:
            lines.append(f"{indent}{key(name)}{separator}{sizes[name]}  # {hf_label}; {where}")
        else:
            lines.append(f"{indent}# {key(name)}{separator}SIZE  # size unknown: {where}")
    return lines


def header(census, sized: int, hf_label: str | None) -> list[str]:
    source = f"; sizes from {hf_label}" if hf_label else ""
    return [
        f"# Written by `tensorcost init` from {census.files} Python file{'s' if census.files != 1 else ''}{source}.",
        "# Every dim the code names is listed (annotations, shape comments, config.x). Uncomment the",
        "# ones marked SIZE and give their sizes: a call site whose dims have no size is not costed",
        f"# (`tensorcost check` prints how many were). {sized} of {len(census.dims)} dims sized.",
    ]


def models_block(hf_path: str, config_directory: str, models_supported: bool, toml: bool = False) -> list[str]:
    relative = os.path.relpath(os.path.abspath(hf_path), os.path.abspath(config_directory)).replace(os.sep, "/")
    why = ("set `entry` and `inputs`, then uncomment it" if models_supported else
           "this version's config loader does not read `models:` yet (it would refuse the key), so it stays commented")
    name = hf_model_name(hf_path)
    lines = ["", f"# Whole-model analysis (Contract 7): {why}."]
    if toml:
        return lines + [
            f"# [tool.tensorcost.models.{_toml_key(name)}]",
            '# entry = "FILE.py:Model.forward"            # the model\'s forward, FILE relative to this file',
            '# inputs = {input_ids = "int64 batch seq"}   # its tensor parameters: dtype and shape',
            f"# dims_from = {json.dumps(relative)}",
            '# mode = "inference"',
        ]
    return lines + [
        "# models:",
        f"#   {_yaml_key(name)}:",
        "#     entry: FILE.py:Model.forward            # the model's forward, FILE relative to this file",
        '#     inputs: {input_ids: "int64 batch seq"}   # its tensor parameters: dtype and shape',
        f"#     dims_from: {json.dumps(relative)}",
        "#     mode: inference",
    ]


def yaml_text(census, sizes, hf_path, config_directory, models_supported) -> str:
    label = os.path.basename(hf_path) if hf_path else None
    sized = sum(1 for name in census.dims if name in sizes)
    lines = header(census, sized, label) + ["dims:"]
    lines += dim_lines(census, sizes, label, _yaml_key, ": ", "  ")
    if hf_path:
        lines += models_block(hf_path, config_directory, models_supported)
    return "\n".join(lines) + "\n"


def toml_table_text(census, sizes, hf_path, config_directory, models_supported) -> str:
    label = os.path.basename(hf_path) if hf_path else None
    sized = sum(1 for name in census.dims if name in sizes)
    lines = ["[tool.tensorcost]"] + header(census, sized, label)
    if hf_path:
        lines += models_block(hf_path, config_directory, models_supported, toml=True)
    lines += ["", "[tool.tensorcost.dims]"] + dim_lines(census, sizes, label, _toml_key, " = ", "")
    return "\n".join(lines) + "\n"


_TABLE_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def without_tensorcost_tables(text: str) -> str:
    """pyproject.toml text without `[tool.tensorcost]` and its sub-tables (for `--force`)."""
    kept, inside = [], False
    for line in text.splitlines(keepends=True):
        match = _TABLE_HEADER.match(line)
        if match:
            name = match.group(1).replace('"', "").replace(" ", "")
            inside = name == "tool.tensorcost" or name.startswith("tool.tensorcost.")
        if not inside:
            kept.append(line)
    return "".join(kept)
