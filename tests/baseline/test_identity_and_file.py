"""The stable identity (qualified names by position, normalised expressions) and the baseline
file's refusals: one line, exit 2, for anything that is not a baseline."""

from __future__ import annotations

import json

import pytest

from tensorcost_lint.baseline.identity import Scopes, keyed, normalise_expression
from tests.cli.inprocess import tensorcost_in

SOURCE = '''x = a @ b


class Outer:
    @decorated
    def method(self):
        return a @ b

    class Inner:
        def deep(self):
            def helper():
                return a @ b
            return helper

    if FLAG:
        def conditional(self):
            return a @ b


def make():
    class Local:
        def run(self):
            return a @ b
    return Local
'''


def test_qualified_names_follow_python_qualname_by_line():
    scopes = Scopes(SOURCE)
    assert [scopes.qualname_at(line) for line in (1, 5, 7, 12, 13, 17, 23, 24)] == [
        "<module>", "Outer.method", "Outer.method", "Outer.Inner.deep.<locals>.helper", "Outer.Inner.deep",
        "Outer.conditional", "make.<locals>.Local.run", "make"]


def test_a_file_that_does_not_parse_puts_every_site_at_module_level():
    assert Scopes("def broken(:\n    a @ b\n").qualname_at(2) == "<module>"


def test_expressions_are_normalised_and_equal_ones_numbered_in_source_order():
    assert normalise_expression("torch.einsum(\n    'ij,jk->ik',  a,b)") == "torch.einsum('ij,jk->ik', a, b)"
    assert normalise_expression("a @  (b") == "a @ (b"  # not an expression: whitespace collapsed
    sites = [(9, 5, "a@b", "third"), (2, 1, "a @ b", "first"), (2, 9, "a @ b", "second")]
    keys = [(key.qualname, key.expression, key.occurrence, item) for key, item in keyed("m.py", Scopes(""), sites)]
    assert keys == [("<module>", "a @ b", 0, "first"), ("<module>", "a @ b", 1, "second"),
                    ("<module>", "a @ b", 2, "third")]


GOOD_SITE = {"path": "model.py", "qualname": "f", "expression": "a @ b", "occurrence": 0, "flops": 8,
             "output_bytes": 16, "traffic_bytes": 48, "lower_bound_seconds": "1.5E-9"}


def _document(**changes):
    document = {"baseline_version": 1, "tool": "tensorcost", "tool_version": "0.1.0",
                "config_fingerprint": "sha256:x", "sites": [GOOD_SITE]}
    document.update(changes)
    return json.dumps(document)


@pytest.mark.parametrize("text,reason", [
    ("not json", "not JSON (JSONDecodeError)"),
    ("[]", "expected the keys baseline_version, config_fingerprint, sites, tool, tool_version"),
    (_document(extra=1), "expected the keys baseline_version, config_fingerprint, sites, tool, tool_version"),
    (_document(baseline_version=2), "baseline_version '2' is not 1"),
    (_document(tool="other"), "tool, tool_version and config_fingerprint must be short strings naming tensorcost"),
    (_document(models=[]), "models must be a mapping"),
    (_document(sites={}), "sites must be a list"),
    (_document(sites=[{**GOOD_SITE, "flops": 2**63}]),
     "sites[0]: occurrence, flops, output_bytes and traffic_bytes must be integers in 0..2**63-1"),
    (_document(sites=[{**GOOD_SITE, "flops": 1.5}]),
     "sites[0]: occurrence, flops, output_bytes and traffic_bytes must be integers in 0..2**63-1"),
    (_document(sites=[{**GOOD_SITE, "lower_bound_seconds": 1e-9}]),
     "sites[0]: lower_bound_seconds must be null or a decimal string"),
    (_document(sites=[{**GOOD_SITE, "lower_bound_seconds": "NaN"}]),
     "sites[0]: lower_bound_seconds must be null or a decimal string"),
    (_document(sites=[GOOD_SITE, GOOD_SITE]), "sites[1]: duplicate site model.py::f `a @ b`"),
    (_document(sites=[{**GOOD_SITE, "qualname": ""}]), "sites[0]: path, qualname and expression must be non-empty strings"),
])
def test_a_file_that_is_not_a_baseline_is_one_line_exit_2(project, text, reason):
    (project / "bad.json").write_text(text)
    ran = tensorcost_in(project, "check", "--no-cache", "--baseline", "bad.json", "model.py")
    assert ran.returncode == 2 and ran.stdout == ""
    assert ran.stderr == f"tensorcost: error: bad.json: not a tensorcost baseline: {reason}\n"


def test_a_directory_or_missing_file_is_refused(project):
    (project / "dir.json").mkdir()
    ran = tensorcost_in(project, "check", "--no-cache", "--baseline", "dir.json", "model.py")
    assert ran.returncode == 2 and ran.stderr.startswith("tensorcost: error: dir.json: cannot read the baseline: ")
    assert ran.stderr.count("\n") == 1


GOOD_MODEL = {"entry": "model.py:GPT.forward", "mode": "inference", "sites": [],
              "totals": {"flops": 8, "forward_flops": 8, "backward_flops": 0, "traffic_bytes": 48,
                         "peak_retained_bytes": None, "lower_bound_seconds": "1.5E-9"}}


@pytest.mark.parametrize("models,reason", [
    ({"gpt": {}}, "models.gpt: expected the keys entry, mode, sites, totals"),
    ({"gpt": {**GOOD_MODEL, "totals": {"flops": 8}}},
     "models.gpt: totals: expected the keys backward_flops, flops, forward_flops, lower_bound_seconds, "
     "peak_retained_bytes, traffic_bytes"),
    ({"gpt": {**GOOD_MODEL, "totals": {**GOOD_MODEL["totals"], "flops": -1}}},
     "models.gpt: totals.flops must be null or an integer in 0..2**63-1"),
    ({"gpt": {**GOOD_MODEL, "totals": {**GOOD_MODEL["totals"], "lower_bound_seconds": 1.0}}},
     "models.gpt: totals.lower_bound_seconds must be null or a decimal string"),
    ({"gpt": {**GOOD_MODEL, "sites": [GOOD_SITE]}}, "models.gpt: sites[0]: module must be a string"),
    ({"gpt": {**GOOD_MODEL, "sites": [{**GOOD_SITE, "module": "h", "flops": "8"}]}},
     "models.gpt: sites[0]: occurrence, flops, output_bytes and traffic_bytes must be integers in 0..2**63-1"),
])
def test_a_bad_models_section_is_one_line_exit_2(project, models, reason):
    (project / "bad.json").write_text(_document(models=models))
    ran = tensorcost_in(project, "check", "--no-cache", "--baseline", "bad.json", "model.py")
    assert ran.returncode == 2 and ran.stdout == ""
    assert ran.stderr == f"tensorcost: error: bad.json: not a tensorcost baseline: {reason}\n"


def test_a_model_no_longer_configured_is_listed_as_removed(project):
    (project / "base.json").write_text(_document(sites=[], models={"gpt": GOOD_MODEL}))
    ran = tensorcost_in(project, "check", "--no-cache", "--baseline", "base.json", "model.py")
    assert "baseline: removed model `gpt`" in ran.stdout.splitlines()
    assert "TCL602" not in ran.stdout


@pytest.mark.parametrize("value", ["5", "'5'", "five%", "-1%", "'1e3%'", "true", "'%'"])
def test_budgets_regression_must_be_a_percentage(project, value):
    (project / "tensorcost.yaml").write_text(f"budgets: {{regression: {value}}}\n")
    ran = tensorcost_in(project, "check", "--no-cache", "model.py")
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1
    assert "tensorcost.yaml: budgets.regression: expected a percentage like 5% (0% to 999999%), got " in ran.stderr


def test_markdown_needs_a_baseline(project):
    ran = tensorcost_in(project, "check", "--format", "markdown", "model.py")
    assert (ran.returncode, ran.stderr) == (2, "tensorcost: error: --format: markdown: the pull-request table needs "
                                               "--baseline FILE\n")


def test_explain_prints_the_rule_page():
    ran = tensorcost_in(".", "explain", "TCL601")
    assert ran.returncode == 0
    assert ran.stdout.startswith("# cost-regression (TCL601)\n")
    assert "on with `--baseline`" in ran.stdout and "## Options\n`budgets.regression` (default `0%`" in ran.stdout
