"""`tensorcost estimate` against Contract 4: the seed plan's exact lines, JSON, and every trap."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import EXAMPLES, assert_one_line_error, run_tensorcost, run_tensorcost_process

SEED_PLAN = EXAMPLES / "plans" / "illustrative_attention_scores.yaml"

SEED_LINES = """\
plan_version=tensor-cost-v1
operation=illustrative-attention-scores
lhs_shape=(8,512,64)
rhs_shape=(8,64,512)
output_shape=(8,512,512)
execution_count=1
execution_liveness=all-executions-live
retained_output_copies=1
traffic_boundary=hbm-to-compute
flops=268435456
traffic_bytes=9437184
retained_activation_bytes=8388608
arithmetic_intensity_flops_per_byte=28.444
lower_bound_us=9.437
bottleneck=TRAFFIC
"""


def seed_document() -> dict:
    return yaml.safe_load(SEED_PLAN.read_text())


def test_seed_plan_prints_contract_lines_exactly():
    result = run_tensorcost("estimate", str(SEED_PLAN))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "\n".join(lines[:-1]) + "\n" == SEED_LINES
    key, _, value = lines[-1].partition("=")
    assert key == "plan_id" and len(value) == 20 and int(value, 16) >= 0


def test_plan_id_is_identical_across_processes():
    # two processes (two hash seeds), and the in-process run: one id
    first = run_tensorcost_process("estimate", str(SEED_PLAN)).stdout.splitlines()[-1]
    second = run_tensorcost_process("estimate", str(SEED_PLAN)).stdout.splitlines()[-1]
    assert run_tensorcost("estimate", str(SEED_PLAN)).stdout.splitlines()[-1] == first
    assert first == second


def test_json_format_carries_the_same_fields():
    result = run_tensorcost("estimate", str(SEED_PLAN), "--format", "json")
    data = json.loads(result.stdout)
    assert data["flops"] == 268435456
    assert data["traffic_bytes"] == 9437184
    assert data["retained_activation_bytes"] == 8388608
    assert data["lhs_shape"] == [8, 512, 64]
    assert data["output_shape"] == [8, 512, 512]
    assert data["arithmetic_intensity_flops_per_byte"] == 28.444
    assert data["lower_bound_us"] == 9.437
    assert data["bottleneck"] == "TRAFFIC"
    text_id = run_tensorcost("estimate", str(SEED_PLAN)).stdout.splitlines()[-1].split("=")[1]
    assert data["plan_id"] == text_id


def test_second_worked_plan_on_shipped_h100_evidence():
    result = run_tensorcost("estimate", str(EXAMPLES / "plans" / "mlp_up_projection_bf16_h100.yaml"))
    assert result.returncode == 0, result.stderr
    fields = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert fields["flops"] == str(32 * 2 * 8192 * 4096 * 14336)
    assert fields["traffic_bytes"] == str(32 * 2 * (8192 * 4096 + 4096 * 14336 + 8192 * 14336))
    assert fields["retained_activation_bytes"] == str(32 * 8192 * 14336 * 2)
    assert fields["arithmetic_intensity_flops_per_byte"] == "2293.760"
    assert fields["lower_bound_us"] == "31116.157"
    assert fields["bottleneck"] == "COMPUTE"


def _mutate(document: dict, path: str, value) -> dict:
    target = document
    keys = path.split(".")
    for key in keys[:-1]:
        target = target[int(key)] if key.isdigit() else target[key]
    last = keys[-1]
    if value is _DELETE:
        del target[last]
    elif last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return document


_DELETE = object()

TRAPS = [
    # (what, mutation path, new value, fragments the one line must contain)
    ("contraction mismatch", "inputs.1.shape", [8, 32, 512], ["contraction mismatch", "64", "32"]),
    ("broadcast under strict", "inputs.1.shape", [1, 64, 512], ["implicit broadcast", "strict"]),
    ("shared operand under strict", "inputs.1.shape", [64, 512], ["implicit broadcast", "strict"]),
    ("narrowing accumulation", "accumulation_dtype", "float16", ["narrowing accumulation", "float16"]),
    ("incompatible accumulation", "inputs", None, ["incompatible accumulation"]),
    ("evidence of another class", "hardware.operation_class", "dense-matmul", ["mismatched hardware evidence", "dense-batched-matmul"]),
    ("evidence of another dtype", "hardware.operand_dtype", "bfloat16", ["mismatched hardware evidence", "float16"]),
    ("evidence of another convention", "hardware.flop_convention", "fma-1", ["mismatched hardware evidence", "fma-2"]),
    ("evidence of another boundary", "hardware.traffic_boundary", "l2-to-sm", ["mismatched hardware evidence", "hbm-to-compute"]),
    ("duplicate tensor names", "inputs.1.name", "query", ["duplicate tensor identity", "query"]),
    ("output named like an input", "output.name", "key_t", ["duplicate tensor identity"]),
    ("all-executions-live without copies", "execution", {"count": 4, "liveness": "all-executions-live", "retained_copies": 1}, ["ambiguous liveness", "retained_copies"]),
    ("not-retained with copies", "execution", {"count": 1, "liveness": "not-retained", "retained_copies": 1}, ["ambiguous liveness"]),
    ("serial-reuse with two copies", "execution", {"count": 2, "liveness": "serial-reuse", "retained_copies": 2}, ["ambiguous liveness"]),
    ("missing traffic owner", "traffic.owner", _DELETE, ["unowned traffic", "traffic.owner"]),
    ("empty traffic owner", "traffic.owner", "", ["unowned traffic"]),
    ("zero dim", "inputs.0.shape", [8, 0, 64], ["inputs[0].shape[1]", "positive"]),
    ("negative dim", "inputs.0.shape", [8, -512, 64], ["inputs[0].shape[1]"]),
    ("zero count", "execution.count", 0, ["execution.count", "positive"]),
    ("zero reads", "inputs.0.reads", 0, ["inputs[0].reads", "positive"]),
    ("negative writes", "output.writes", -1, ["output.writes"]),
    ("overflowing product", "inputs", [
        {"name": "query", "shape": [2**31, 2**31, 64], "dtype": "float16"},
        {"name": "key_t", "shape": [2**31, 64, 2**31], "dtype": "float16"},
    ], ["count overflow"]),
    ("dim above 2**63-1", "inputs.0.shape", [8, 2**64, 64], ["count overflow"]),
    ("unknown top-level key", "operatoin", "x", ["operatoin", "unknown key"]),
    ("unknown nested key", "execution.liveliness", "x", ["execution.liveliness", "unknown key"]),
    ("non-mapping input record", "inputs.0", "query", ["inputs[0]", "expected a mapping"]),
    ("unknown dtype", "inputs.0.dtype", "float13", ["unknown dtype", "float13"]),
    ("wrong plan version", "plan_version", "tensor-cost-v0", ["plan_version"]),
    ("unknown liveness", "execution.liveness", "forever", ["execution.liveness", "forever"]),
    ("float shape", "inputs.0.shape", [8, 512.5, 64], ["inputs[0].shape[1]", "integer"]),
    ("boolean count", "execution.count", True, ["execution.count", "integer"]),
]


@pytest.mark.parametrize("what,path,value,fragments", TRAPS, ids=[t[0] for t in TRAPS])
def test_each_trap_exits_2_with_one_line(tmp_path, what, path, value, fragments):
    document = seed_document()
    if what == "incompatible accumulation":
        for tensor in document["inputs"]:
            tensor["dtype"] = "bfloat16"
        document["accumulation_dtype"] = "float16"
        document["hardware"]["operand_dtype"] = "bfloat16"
        document["hardware"]["accumulation_dtype"] = "float16"
    else:
        _mutate(document, path, value)
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(document))
    result = run_tensorcost("estimate", str(plan))
    assert_one_line_error(result, str(plan), *fragments)
    assert result.stdout == ""


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("inputs: [unclosed", "invalid YAML"),
        ("- a\n- b\n", "expected a mapping, got a list"),
        ("just a string", "expected a mapping"),
        ("!!python/object:os.system {}\n", "invalid YAML"),
        ("a: &x [1]\nb: [*x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x]\n", "alias"),
        ("", "expected a mapping"),
    ],
)
def test_malformed_documents_exit_2_with_one_line(tmp_path, text, fragment):
    plan = tmp_path / "plan.yaml"
    plan.write_text(text)
    assert_one_line_error(run_tensorcost("estimate", str(plan)), fragment)


def test_missing_file_and_directory(tmp_path):
    assert_one_line_error(run_tensorcost("estimate", str(tmp_path / "absent.yaml")), "file not found")
    assert_one_line_error(run_tensorcost("estimate", str(tmp_path)), "directory")


def test_non_utf8_plan(tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_bytes(b"operation: \xff\xfe\n")
    assert_one_line_error(run_tensorcost("estimate", str(plan)), "not UTF-8")


def test_hardware_by_unknown_id(tmp_path):
    document = seed_document()
    document["hardware"] = "tpu-v9"
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(document))
    assert_one_line_error(run_tensorcost("estimate", str(plan)), "unknown hardware id 'tpu-v9'", "h100-sxm")
