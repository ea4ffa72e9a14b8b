"""`tensorcost measure`: with calibrated CPU evidence every bound holds (measured ≥ bound), and a
wrong record is reported as EVIDENCE VIOLATED with exit 1, never hidden."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT, assert_one_line_error, run_tensorcost, run_tensorcost_process
from tests.measurement.conftest import DEVICE_ID, write

MEASURE = ("measure", "--threads", "1", "--no-progress", "--format", "json")


def _measure(project, *args):
    result = run_tensorcost_process(*MEASURE, *args, cwd=project)  # timed: thread counts stay in its process
    assert result.returncode in (0, 1), result.stderr
    return result, json.loads(result.stdout)


def test_every_site_holds_its_calibrated_bound(numpy_measurements):
    returncode, data, _ = numpy_measurements
    measurements = data["measurements"]
    timed = [m for m in measurements if m["measured_median_seconds"] is not None]
    assert len(timed) == 9, [(m["location"], m["status"], m["reason"]) for m in measurements]
    for m in timed:
        # the property itself, on every site: no run is faster than the evidence allows
        assert m["measured_median_seconds"] >= m["lower_bound_seconds"], m
        assert m["status"] == "held" and m["ratio"] >= 1.0
        assert m["hardware"] == DEVICE_ID and m["repeats"] >= 3
    assert returncode == 0
    assert data["summary"]["held"] == 9 and data["summary"]["evidence_violated"] == 0
    assert data["threads"] == 1 and data["warnings"] == []


def test_paths_of_each_operation_are_the_modelled_ones(numpy_measurements):
    _, data, _ = numpy_measurements
    by_line = {m["line"]: m for m in data["measurements"]}
    assert by_line[11]["operation"] == "attention" and "materialized" in by_line[11]["kernel"]
    assert "2 steps" in by_line[19]["kernel"]  # torch.einsum left to right: two pairwise steps
    assert "optimize=False" in by_line[24]["kernel"]  # numpy's default: one loop over every index
    assert by_line[25]["kernel"] == "np.matmul (BLAS)"
    assert by_line[31]["dtype"] == "float64"
    assert by_line[35]["status"] == "skipped" and "unbound dims: mystery" in by_line[35]["reason"]


def test_wrong_evidence_is_reported_as_violated_with_exit_1(project):
    # a machine claimed to be 1000x slower than it is: every run beats its "lower bound"
    write(project / "slow.yaml", """\
        devices:
          - id: slow
            device: imaginary slow CPU
            source: a deliberately wrong record
            measured: 2025-01-01
            owner: tests
            compute:
              - {operation_class: dense-matmul, operand_dtype: float32, accumulation_dtype: float32,
                 flop_convention: fma-2, peak_flops_per_second: 1e8}
            bandwidth:
              - {traffic_boundary: dram-to-cpu, sustained_bytes_per_second: 1e7}
        """)
    result = run_tensorcost_process("measure", "--threads", "1", "--no-progress", "--evidence", "slow.yaml", "model.py",
                            cwd=project)
    assert result.returncode == 1, result.stderr
    assert "EVIDENCE VIOLATED" in result.stdout
    assert "which calibrate did not measure on this machine" in result.stdout  # said before the numbers
    # float64 has no record on this device: measured, but with no bound to hold
    assert "no bound" in result.stdout


def test_fewer_calibrated_threads_than_measured_ones_is_warned(project):
    _, data = _measure(project, "model.py", "--threads", "2", "--repeats", "3")
    assert any("measured with 1 thread" in w for w in data["warnings"])


def test_memory_cap_skips_with_the_reason(project):
    result, data = _measure(project, "model.py", "--memory-cap", "1KiB")
    assert result.returncode == 0
    reasons = [m["reason"] for m in data["measurements"]]
    assert all(m["status"] == "skipped" for m in data["measurements"])
    assert sum("memory cap" in r for r in reasons) == 9


def test_plan_file_against_calibrated_evidence(project):
    write(project / "plan.yaml", """\
        plan_version: tensor-cost-v1
        operation: small-projection
        operation_class: dense-matmul
        broadcast_policy: shared-weights
        inputs:
          - {name: x, shape: [128, 64], dtype: float32}
          - {name: w, shape: [64, 96], dtype: float32}
        output: {name: y, dtype: float32}
        execution: {count: 4, liveness: serial-reuse, retained_copies: 1}
        traffic: {boundary: dram-to-cpu, owner: tests}
        hardware: test-cpu
        """)
    _, data = _measure(project, "plan.yaml", "--evidence", "calibrated.yaml")
    (m,) = data["measurements"]
    assert m["operation"] == "plan" and m["executions"] == 4
    assert m["status"] == "held" and m["measured_median_seconds"] >= m["lower_bound_seconds"]


def test_seed_plan_of_another_operation_class_is_measured_without_a_bound(project):
    plan = EXAMPLES / "plans" / "illustrative_attention_scores.yaml"
    # numpy runs float16 matmuls at ~0.3 GFLOP/s (about 1 s here): on a loaded machine the default
    # --max-site-seconds could skip it, and this test is about the missing bound
    _, data = _measure(project, str(plan), "--evidence", "calibrated.yaml", "--repeats", "3", "--warmup", "0",
                       "--max-site-seconds", "600")
    (m,) = data["measurements"]
    assert m["status"] == "no bound" and "dense-batched-matmul" in m["reason"]


def test_torch_backend_runs_fused_attention_and_refuses_numpy_loops(project):
    pytest.importorskip("torch")
    _, data = _measure(project, "model.py", "--backend", "torch", "--repeats", "5")
    by_line = {m["line"]: m for m in data["measurements"]}
    assert "scaled_dot_product_attention" in by_line[11]["kernel"] and "causal" in by_line[11]["kernel"]
    assert by_line[24]["status"] == "skipped" and "--backend numpy" in by_line[24]["reason"]
    for m in data["measurements"]:
        if m["status"] in ("held", "EVIDENCE VIOLATED"):
            assert m["measured_median_seconds"] >= m["lower_bound_seconds"], m


def test_text_table_names_bound_measured_and_ratio(project):
    result = run_tensorcost_process("measure", "--threads", "1", "--no-progress", "--repeats", "3", "model.py", cwd=project)
    assert result.returncode == 0, result.stderr
    header = next(line for line in result.stdout.splitlines() if line.startswith("#  location"))
    for column in ("bound", "measured", "ratio", "bottleneck", "status"):
        assert column in header
    assert "9 held the bound, 0 EVIDENCE VIOLATED" in result.stdout


@pytest.mark.parametrize("args, fragment", [
    (("--backend", "tensorflow"), "invalid choice"),
    (("--memory-cap", "lots"), "--memory-cap"),
    (("--repeats", "0"), "--repeats"),
    (("--hardware", "no-such-device"), "unknown hardware id"),
    (("--evidence", "missing.yaml"), "missing.yaml"),
    (("no_such_dir",), "no such file"),
])
def test_bad_input_exits_2_with_one_line(project, args, fragment):
    assert_one_line_error(run_tensorcost("measure", "--no-progress", *args, cwd=project), fragment)


def test_missing_backend_library_names_what_to_install(project):
    for library, flag, hint in (("numpy", "numpy", "pip install numpy opt_einsum"), ("jax", "jax", "pip install jax")):
        code = ("import sys; sys.modules[%r] = None; from tensorcost_lint.cli.main import main; "
                "sys.exit(main(['measure', '--no-progress', '--backend', %r, 'model.py']))") % (library, flag)
        result = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=60,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert_one_line_error(result, library, hint)
