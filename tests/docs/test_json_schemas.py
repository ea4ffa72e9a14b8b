"""The JSON schemas in docs/schemas/ are valid schemas, hold the documents the tool prints, and
refuse documents that break the contract — so the hook in tests/conftest.py, which validates every
`check --format json` and `model --format json` document the suite makes, can fail."""

from __future__ import annotations

import copy
import json

import pytest

from tests.cli.inprocess import tensorcost_in
from tests.docs.json_schemas import CHECK_SCHEMA, MODEL_SCHEMA, problems, validator

pytest.importorskip("jsonschema")
from tests.conftest import EXAMPLES, ROOT  # noqa: E402


@pytest.fixture(scope="module")
def check_document() -> dict:
    result = tensorcost_in(ROOT, "check", "--no-cache", "--format", "json", "examples/")
    assert result.returncode == 1
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def model_document() -> dict:
    result = tensorcost_in(EXAMPLES, "model", "--entry", "gpt_block.py:CausalSelfAttention.forward",
                           "--input", "x=float32 B T C", "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_schemas_are_valid_draft_2020_12():
    for path in (CHECK_SCHEMA, MODEL_SCHEMA):
        validator(path)  # check_schema raises on an invalid schema


def test_check_output_matches_its_schema(check_document):
    assert check_document["sites"] and check_document["findings"]
    assert any(not site["resolved"] for site in check_document["sites"])  # both kinds of site are held
    assert problems(check_document, CHECK_SCHEMA) == []


def test_model_output_matches_its_schema(model_document):
    assert model_document["models"][0]["undecided"] == ["self.flash"]
    assert problems(model_document, MODEL_SCHEMA) == []


@pytest.mark.parametrize("break_it, where", [
    (lambda d: d.pop("files_checked"), "(top)"),
    (lambda d: d["sites"][0].update(flops=1.5), "sites/0/flops"),
    (lambda d: d["sites"][0].update(line=0), "sites/0/line"),
    (lambda d: d["findings"][0].update(code="401"), "findings/0/code"),
    (lambda d: next(s for s in d["sites"] if not s["resolved"]).update(flops=12), "sites/"),
    (lambda d: d["sites"][0].update(flops=2**63), "sites/0/flops"),
])
def test_check_schema_refuses_a_broken_document(check_document, break_it, where):
    document = copy.deepcopy(check_document)
    break_it(document)
    assert any(problem.startswith(where) for problem in problems(document, CHECK_SCHEMA))


@pytest.mark.parametrize("break_it, where", [
    (lambda d: d["models"][0].pop("totals"), "models/0"),
    (lambda d: d["models"][0]["totals"].update(flops_range=[1]), "models/0/totals/flops_range"),
    (lambda d: d["models"][0]["sites"][0].update(resolved="yes"), "models/0/sites/0/resolved"),
    (lambda d: d["models"][0].update(undecided="self.flash"), "models/0/undecided"),
])
def test_model_schema_refuses_a_broken_document(model_document, break_it, where):
    document = copy.deepcopy(model_document)
    break_it(document)
    assert any(problem.startswith(where) for problem in problems(document, MODEL_SCHEMA))


def test_every_json_document_made_in_process_is_validated():
    """The conftest hook is live: the `report_data` every in-process `check --format json` calls
    validates what it returns, so a document off its schema fails the test that made it."""
    from types import SimpleNamespace

    from tensorcost_lint.formats import json_report

    broken = SimpleNamespace(results=[], files_checked=-1)  # a negative count is off the schema
    with pytest.raises(AssertionError, match="does not match check-report.schema.json"):
        json_report.report_data(broken, None)
    assert json_report.report_data(SimpleNamespace(results=[], files_checked=0), None)["sites"] == []
