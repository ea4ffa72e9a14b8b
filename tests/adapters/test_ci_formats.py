"""`--format sarif` and `--format github`, run as CI runs them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from tensorcost_lint.rules.findings import Finding
from tensorcost_lint.formats.github import annotation
from tensorcost_lint.rules import ALL_RULES

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json"
MODELS = ["models/einsum_chains.py", "models/gpt_attention.py", "models/jaxtyping_attention.py",
          "models/mixed_precision.py"]


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def _sarif(tensorcost, cwd, *args):
    result = tensorcost("check", "--format", "sarif", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def _results_by_location(log):
    found = {}
    for result in log["runs"][0]["results"]:
        location = result["locations"][0]["physicalLocation"]
        region = location["region"]
        key = (location["artifactLocation"]["uri"], region["startLine"], region["startColumn"], result["ruleId"])
        found[key] = result
    return found


def test_sarif_is_valid_2_1_0_and_describes_every_rule(model_repo, tensorcost, sarif_validator):
    log = _sarif(tensorcost, model_repo, "--select", "TCL,TCL501", *MODELS)
    errors = sorted(sarif_validator.iter_errors(log), key=str)
    assert not errors, errors[0]
    assert log["version"] == "2.1.0"
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "tensorcost" and re.fullmatch(r"\d+\.\d+\.\d+.*", driver["version"])
    rules = {rule["id"]: rule for rule in driver["rules"]}
    for rule in ALL_RULES:
        described = rules[rule.code]
        assert described["name"] == rule.name
        assert described["shortDescription"]["text"] and described["fullDescription"]["text"]
        assert described["helpUri"].startswith("https://") and rule.code in described["helpUri"]
        assert described["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning",
                                                              "info": "note"}[rule.severity]
    for result in log["runs"][0]["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_sarif_results_match_the_json_report(model_repo, tensorcost):
    log = _sarif(tensorcost, model_repo, "--select", "TCL,TCL501", *MODELS)
    report = json.loads(tensorcost("check", "--format", "json", "--select", "TCL,TCL501", *MODELS, cwd=model_repo).stdout)
    results = _results_by_location(log)
    assert len(results) == len(log["runs"][0]["results"]) == len(report["findings"])
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for finding in report["findings"]:
        result = results[(finding["path"], finding["line"], finding["column"], finding["code"])]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert (region["endLine"], region["endColumn"]) == (finding["end_line"], finding["end_column"])
        assert result["level"] == levels[finding["severity"]]
        assert result["message"]["text"] == finding["message"]


def test_fingerprints_survive_lines_inserted_above(model_repo, tensorcost):
    before = _sarif(tensorcost, model_repo, *MODELS)
    again = _sarif(tensorcost, model_repo, *MODELS)
    path = model_repo / "models" / "gpt_attention.py"
    path.write_text('"""A docstring pushed in above."""\n\n' + path.read_text())
    after = _sarif(tensorcost, model_repo, *MODELS)

    def prints(log):
        return sorted(next(iter(r["partialFingerprints"].values())) for r in log["runs"][0]["results"])

    assert prints(before) == prints(again) == prints(after)
    assert len(set(prints(before))) == len(prints(before))  # TCL401 and TCL402 on one line stay distinct
    lines = {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after["runs"][0]["results"]
             if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "models/gpt_attention.py"}
    assert lines == {26}


def test_sarif_paths_are_relative_to_the_checkout_and_uri_encoded(model_repo, tensorcost, sarif_validator):
    spaced = model_repo / "my models"
    spaced.mkdir()
    (spaced / "chain.py").write_text((model_repo / "models" / "einsum_chains.py").read_text())
    (model_repo / "broken.py").write_text("def f(a, b:\n    return a @ b\n")
    out = model_repo / "out.sarif"
    result = tensorcost("check", "--format", "sarif", "--output", str(out), str(spaced / "chain.py"), "broken.py",
                        cwd=model_repo)
    assert result.returncode == 1 and result.stdout == ""
    log = json.loads(out.read_text())
    assert not list(sarif_validator.iter_errors(log))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"my%20models/chain.py", "broken.py"}
    assert log["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"] == model_repo.resolve().as_uri() + "/"
    syntax = [r for r in log["runs"][0]["results"] if r["ruleId"] == "E999"]
    assert len(syntax) == 1 and syntax[0]["level"] == "error"


COMMAND = re.compile(r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=(\d+)(?:,endLine=(\d+))?"
                     r"(?:,endColumn=(\d+))?,title=(TCL\d{3})::(.+)$")


def test_github_annotations_one_per_finding_with_level_by_severity(model_repo, tensorcost):
    result = tensorcost("check", "--format", "github", "--select", "TCL,TCL501", *MODELS, cwd=model_repo)
    report = json.loads(tensorcost("check", "--format", "json", "--select", "TCL,TCL501", *MODELS, cwd=model_repo).stdout)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    commands = [COMMAND.match(line) for line in lines[:-1]]
    assert all(commands), [line for line, match in zip(lines, commands) if not match]
    assert lines[-1].startswith("Found ") and re.search(r"\(checked 4 files; costed \d+ of \d+ call sites\)$", lines[-1])
    levels = {"error": "error", "warning": "warning", "info": "notice"}
    expected = {(f["path"], f["line"], f["column"], f["code"], levels[f["severity"]]) for f in report["findings"]}
    seen = {(m[2], int(m[3]), int(m[4]), m[7], m[1]) for m in commands}
    assert seen == expected
    assert {m[1] for m in commands} == {"error", "warning", "notice"}
    scores = next(m for m in commands if m[7] == "TCL401" and "jaxtyping" in m[2])
    assert (scores[5], scores[6]) == ("12", "51")  # the einsum call's extent, end exclusive as in SARIF


def test_github_escapes_workflow_command_characters():
    finding = Finding("dir,v2/model:a.py", 3, 5, "TCL401", "warning", "100% of\r\nthe budget: a, b", end_line=4,
                      end_column=2)
    line = annotation(finding)
    assert line == ("::warning file=dir%2Cv2/model%3Aa.py,line=3,col=5,endLine=4,title=TCL401::"
                    "100%25 of%0D%0Athe budget: a, b")
    assert "\n" not in line and "\r" not in line


def test_github_output_file_and_escaped_paths(model_repo, tensorcost):
    odd = model_repo / "exp,1:final"
    odd.mkdir()
    (odd / "chain.py").write_text((model_repo / "models" / "einsum_chains.py").read_text())
    out = model_repo / "annotations.txt"
    result = tensorcost("check", "--format", "github", "--output", str(out), "exp,1:final/chain.py", cwd=model_repo)
    assert result.returncode == 1 and result.stdout == ""
    first = out.read_text().splitlines()[0]
    assert first.startswith("::warning file=exp%2C1%3Afinal/chain.py,line=11,col=12,")


def test_github_with_nothing_to_check_says_so(tmp_path, tensorcost):
    result = tensorcost("check", "--format", "github", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "No Python files to check (checked 0 files)\n"
