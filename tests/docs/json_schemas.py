"""The JSON schemas of `check --format json` and `model --format json` (docs/schemas/), and the
hook that holds every such document the test suite makes against them (tests/conftest.py)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"
CHECK_SCHEMA = SCHEMAS / "check-report.schema.json"
MODEL_SCHEMA = SCHEMAS / "model-report.schema.json"


@lru_cache(maxsize=None)
def validator(path: Path):
    from jsonschema import Draft202012Validator

    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def problems(document: dict, path: Path) -> list[str]:
    return [f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
            for error in validator(path).iter_errors(document)]


def assert_valid(document: dict, path: Path) -> None:
    found = problems(document, path)
    assert not found, f"JSON output does not match {path.name}:\n" + "\n".join(found[:10])


def validating(function, path: Path):
    """`function` (which returns a JSON document) with its every result checked against `path`."""
    def checked(*args, **kwargs):
        document = function(*args, **kwargs)
        assert_valid(document, path)
        return document

    return checked
