"""One reader of compute and bandwidth evidence records: a record written in an evidence file and the
same record written inline in a plan's `hardware:` mapping are read, and refused, the same way."""

from __future__ import annotations

import pytest
import yaml

from tensorcost_lint.config.errors import ConfigError
from tensorcost_lint.config.plan_files import load_plan
from tensorcost_lint.hardware.evidence_files import read_evidence_document
from tests.conftest import EXAMPLES

SEED_PLAN = EXAMPLES / "plans" / "illustrative_attention_scores.yaml"
DEVICE = {"id": "illustrative", "device": "illustrative", "source": "illustrative only", "measured": "2026-08-14",
          "owner": "perf-eng"}
COMPUTE = {"operation_class": "dense-batched-matmul", "operand_dtype": "float16", "accumulation_dtype": "float32",
           "flop_convention": "fma-2", "peak_flops_per_second": "100e12"}
BANDWIDTH = {"traffic_boundary": "hbm-to-compute", "sustained_bytes_per_second": "1e12"}

# (key, bad value or None to leave the key out, the reason both readers give)
BAD_RECORDS = [
    ("operand_dtype", "float17", "unknown dtype 'float17'"),
    ("accumulation_dtype", None, "required key is missing"),
    ("flop_convention", "fma-3", "expected one of fma-2, fma-1, got 'fma-3'"),
    ("peak_flops_per_second", "-5", "must be positive, got -5"),
    ("peak_flops_per_second", "1e99", "out of range: 1e99 is not within 1e-30 .. 1e30 in magnitude"),
    ("operation_class", " ", "expected a non-empty string, got ' '"),
    ("traffic_boundary", None, "required key is missing"),
    ("sustained_bytes_per_second", "fast", "expected a number, got 'fast'"),
]


def _changed(record: dict, key: str, value) -> dict:
    return {k: v for k, v in record.items() if k != key} if value is None else {**record, key: value}


def _evidence_error(key: str, value):
    compute = _changed(COMPUTE, key, value) if key in COMPUTE else COMPUTE
    bandwidth = _changed(BANDWIDTH, key, value) if key in BANDWIDTH else BANDWIDTH
    document = {"devices": [{**DEVICE, "compute": [compute], "bandwidth": [bandwidth]}]}
    try:
        read_evidence_document(document, "ev.yaml")
    except ConfigError as error:
        return error
    return None


def _inline_plan_error(tmp_path, key: str, value):
    document = yaml.safe_load(SEED_PLAN.read_text())
    document["hardware"] = _changed(document["hardware"], key, value)
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(document))
    try:
        load_plan(plan, source="plan.yaml")
    except ConfigError as error:
        return error
    return None


@pytest.mark.parametrize(("key", "value", "reason"), BAD_RECORDS)
def test_a_record_is_refused_the_same_in_an_evidence_file_and_inline_in_a_plan(tmp_path, key, value, reason):
    from_file, inline = _evidence_error(key, value), _inline_plan_error(tmp_path, key, value)
    record = "compute" if key in COMPUTE else "bandwidth"
    assert str(from_file) == f"ev.yaml: devices[0].{record}[0].{key}: {reason}"
    assert str(inline) == f"plan.yaml: hardware.{key}: {reason}"


def test_an_inline_record_still_refuses_keys_nobody_reads(tmp_path):
    error = _inline_plan_error(tmp_path, "peak_flops_per_seconds", "1e12")
    assert str(error) == "plan.yaml: hardware.peak_flops_per_seconds: unknown key"
