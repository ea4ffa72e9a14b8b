"""Fuzzing the user-written formats: tensorcost.yaml, pyproject's [tool.tensorcost], plan files,
and the shape strings, shape comments and pragmas inside source. The readers may refuse anything,
but only with their typed error (ConfigError -> exit 2, one line; TCL001 inside source), and a plan
they accept must estimate without raising (`tensorcost estimate` does not catch estimator errors).
"""

from __future__ import annotations

import copy
import datetime
import json
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorcost_lint.cli.estimate_command import estimate_fields
from tensorcost_lint.config.errors import ConfigError
from tensorcost_lint.config.plan_files import load_plan
from tensorcost_lint.config.config_discovery import load_config_file
from tensorcost_lint.driver.engine import lint_source

from .lint_checks import fuzz_config

ROOT = Path(__file__).resolve().parents[2]
PLANS = sorted((ROOT / "examples" / "plans").glob("*.yaml"))
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))

# Values a hand-edited YAML file can hold, with the edges that break readers: huge and negative
# ints, floats (nan, inf), booleans (ints in Python), dates, nulls, empty and odd strings.
scalars = st.one_of(
    st.sampled_from((0, 1, -1, 8, 2**63 - 1, 2**63, 10**30, -(10**30), True, False, None, "", " ", "8", "256MiB",
                     "1.5GB", "-1GiB", "1e400", "nan", "inf", "float32", "bfloat16", "h100-sxm", "strict",
                     "serial-reuse", "all-executions-live", "TCL4", "ALL", "x" * 300, "é", "\t",
                     datetime.date(2026, 1, 1))),
    st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=6) | scalars, inner, max_size=4)),
                      max_leaves=12)
CONFIG_KEYS = ("dims", "sequence_dims", "default_dtype", "broadcast_policy", "budgets", "hardware", "evidence",
               "traffic_boundary", "execution", "frameworks", "select", "ignore", "extend_select", "exclude", "bogus")
SUBKEYS = {
    "dims": st.dictionaries(st.sampled_from(("batch", "seq", "T", "1x", "a-b", "é", "")), values, max_size=3),
    "budgets": st.dictionaries(st.sampled_from(("quadratic_bytes", "intermediate_bytes", "contraction_regret",
                                                "latency_seconds", "nope")), values, max_size=3),
    "execution": st.dictionaries(st.sampled_from(("count", "liveness", "retained_copies", "x")), values, max_size=3),
    "frameworks": st.dictionaries(st.sampled_from(("torch_einsum", "jax")), values, max_size=2),
}
config_documents = st.dictionaries(
    st.sampled_from(CONFIG_KEYS),
    st.none(),
    max_size=6,
).flatmap(lambda keys: st.fixed_dictionaries({key: SUBKEYS.get(key, values) for key in keys}))


def _dump(document) -> str:
    return yaml.safe_dump(document, allow_unicode=True, sort_keys=False)


def _only_config_errors(load, path: Path):
    start = time.process_time()
    try:
        return load(path)
    except ConfigError as error:
        message = str(error)
        assert len(message) < 2000, message[:300]
        return None
    finally:
        assert time.process_time() - start < 2


@FUZZ
@given(document=config_documents)
def test_config_yaml_only_config_errors(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("cfg") / "tensorcost.yaml"
    path.write_text(_dump(document))
    _only_config_errors(load_config_file, path)


def _toml_value(value) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if -(2**63) <= value < 2**63 else None  # TOML's own integer range
    if isinstance(value, float):
        return {float("inf"): "inf", float("-inf"): "-inf"}.get(value, "nan" if value != value else repr(value))
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        items = [_toml_value(v) for v in value]
        return None if None in items else "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        pairs = []
        for key, inner in value.items():
            rendered = _toml_value(inner)
            if rendered is None or not isinstance(key, str):
                return None
            pairs.append(f"{json.dumps(key)} = {rendered}")
        return None if None in pairs else "{" + ", ".join(pairs) + "}"
    return None


@FUZZ
@given(document=config_documents)
def test_pyproject_table_only_config_errors(tmp_path_factory, document):
    lines = ["[project]", 'name = "x"', "", "[tool.tensorcost]"]
    for key, value in document.items():
        rendered = _toml_value(value)
        if rendered is not None:
            lines.append(f"{key} = {rendered}")
    path = tmp_path_factory.mktemp("toml") / "pyproject.toml"
    path.write_text("\n".join(lines) + "\n")
    _only_config_errors(load_config_file, path)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(alphabet="{}[]:,-&*!|>'\"# \n\tabc019.%@`", max_size=200))
def test_raw_yaml_text_only_config_errors(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("raw") / "tensorcost.yaml"
    path.write_text(text)
    _only_config_errors(load_config_file, path)


# -- plan files --------------------------------------------------------------------------------

PLAN_DOCUMENTS = [yaml.safe_load(path.read_text()) for path in PLANS]


def _paths(document, prefix=()):
    """Every (path, value) in a nested document, so a mutation can target any field."""
    yield prefix, document
    if isinstance(document, dict):
        for key, value in document.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from _paths(value, prefix + (index,))


@st.composite
def mutated_plans(draw):
    document = copy.deepcopy(draw(st.sampled_from(PLAN_DOCUMENTS)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [path for path, _ in _paths(document) if path]
        path = draw(st.sampled_from(paths))
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.integers(0, 4))
        if action == 0 and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == 1 and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[path[-1]]))  # duplicates: names, dims
        else:
            parent[path[-1]] = draw(values)
    return document


@FUZZ
@given(document=mutated_plans())
def test_plan_yaml_only_config_errors_and_accepted_plans_estimate(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("plan") / "plan.yaml"
    path.write_text(_dump(document))
    plan = _only_config_errors(lambda p: load_plan(p, {}), path)
    if plan is not None:
        estimate_fields(plan)  # what `tensorcost estimate` prints; must not raise once a plan loads


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.name)
def test_the_example_plans_load(path):
    estimate_fields(load_plan(path, {}))


# -- shape strings, shape comments and pragmas inside source -----------------------------------

GRAMMAR = "abBTdhs_#*.()[]{}+-/%,:;=0123456789 'é→…\\"
shape_texts = st.one_of(st.text(max_size=60), st.text(alphabet=GRAMMAR, max_size=60))
CODE = '''# tensorcost: dims {pragma}
import torch
from torch import Tensor
from jaxtyping import Float


def f(q: Float[Tensor, {shape!r}], k: Float[Tensor, "batch seq d_model"]):
    y = q @ k.transpose(-2, -1)  # {comment}
    z = y  # shape: {comment}
    return y @ q
'''


@FUZZ
@given(shape=shape_texts, comment=shape_texts, pragma=shape_texts)
def test_shape_text_in_source_is_only_ever_tcl001(shape, comment, pragma):
    if any(c in comment + pragma for c in "\x00\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):
        comment = pragma = "B T"  # NUL is E999; line ends are the subject of test_source_text_edges
    text = CODE.format(shape=shape, comment=comment, pragma=pragma)
    start = time.process_time()
    result = lint_source(text, "m.py", fuzz_config())
    assert time.process_time() - start < 2
    codes = {f.code for f in result.findings}
    assert "TCL900" not in codes and "E999" not in codes, [(f.code, f.message) for f in result.findings]
