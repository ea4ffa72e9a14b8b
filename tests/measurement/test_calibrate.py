"""`tensorcost calibrate`: evidence that loads back, drives bounds in `check`, and says how it was
measured; the writer's rounding and merging; one-line errors."""

from __future__ import annotations

import datetime as _dt
import io
import json
import time
from dataclasses import replace
from decimal import Decimal

import pytest

from estimator import normalize_dtype
from tensorcost_lint.hardware.evidence_files import load_evidence_file
from tensorcost_lint.measurement.calibration import (
    Calibration,
    CalibrationStep,
    MeasuredRecord,
    RateMeasurement,
    RecordKey,
    Settings,
    run_steps,
)
from tensorcost_lint.measurement.evidence_writer import (
    calibration_evidence,
    merged_devices,
    rate_text,
    render_evidence,
    rounded_up,
)
from tensorcost_lint.measurement.kernel_libraries import KernelLibrary, threads_recorded
from tensorcost_lint.measurement.progress import ProgressBar
from tensorcost_lint.measurement.timing import Timing, time_calls
from tests.conftest import assert_one_line_error, run_tensorcost
from tests.measurement.conftest import DEVICE_ID


def test_quick_calibration_loads_back_as_contract_3_evidence(calibrated):
    devices = load_evidence_file(calibrated)
    device = devices[DEVICE_ID]
    assert device.owner == "tests"
    assert device.measured == _dt.date.today().isoformat()
    records = {(c.operation_class, c.operand_dtype.name, c.accumulation_dtype.name) for c in device.compute}
    assert ("dense-matmul", "float32", "float32") in records
    assert ("dense-matmul", "float64", "float64") in records
    assert all(c.flop_convention == "fma-2" and c.peak_flops_per_second > 0 for c in device.compute)
    assert [b.traffic_boundary for b in device.bandwidth] == ["dram-to-cpu"]
    # how it was measured: libraries, threads, best/median/spread per record
    assert "numpy" in device.source and "1 thread" in device.source
    assert threads_recorded(device.source) == 1
    assert "median" in device.source and "spread" in device.source and "best" in device.source


def test_torch_adds_a_bfloat16_record(calibrated):
    pytest.importorskip("torch")
    device = load_evidence_file(calibrated)[DEVICE_ID]
    bf16 = device.compute_for("dense-matmul", normalize_dtype("bfloat16"), normalize_dtype("float32"), "fma-2")
    assert bf16 is not None and "torch" in device.source


def test_config_naming_the_calibrated_file_gives_check_bounds(project):
    result = run_tensorcost("check", "--format", "json", "model.py", cwd=project)
    assert result.returncode in (0, 1), result.stderr
    sites = json.loads(result.stdout)["sites"]
    device = load_evidence_file(project / "calibrated.yaml")[DEVICE_ID]
    peak = {c.operand_dtype.name: c.peak_flops_per_second for c in device.compute}
    bandwidth = device.bandwidth[0].sustained_bytes_per_second
    resolved = [s for s in sites if s["resolved"]]
    assert len(resolved) >= 8
    for site in resolved:
        assert site["hardware"] == DEVICE_ID
        dtype = site["operands"][0]["dtype"]
        expected = max(Decimal(site["flops"]) / peak[dtype], Decimal(site["traffic_bytes"]) / bandwidth)
        assert site["lower_bound_seconds"] == pytest.approx(float(expected), rel=1e-3)


def _calibration(peaks: dict, bandwidth: float) -> Calibration:
    calibration = Calibration("box", "Test CPU", "dram-to-cpu", "2025-01-02", True,
                              [KernelLibrary("numpy", "numpy 9 with BLAS 1", 4)])
    for dtype, rates in peaks.items():
        for rate in rates:
            timing = Timing((1.0, 1.2, 1.1), warmup=2)
            key = RecordKey("compute", "dense-matmul", dtype)
            calibration.add(key, RateMeasurement("mm", "8x8x8", int(rate), timing))
    calibration.add(RecordKey("bandwidth", traffic_boundary="dram-to-cpu"),
                    RateMeasurement("copy", "64 MiB", int(bandwidth), Timing((1.0, 2.0, 1.5), 1)))
    return calibration


def test_peak_is_the_best_candidate_rounded_up():
    evidence = calibration_evidence(_calibration({"float32": [90e9, 123_456_789_012, 100e9]}, 31_234_567_890), "me")
    (record,) = evidence.compute
    assert record.peak_flops_per_second == Decimal("123500000000")  # best, and never rounded down
    assert evidence.bandwidth[0].sustained_bytes_per_second == Decimal("31240000000")
    assert "median" in evidence.source and "4 threads" in evidence.source


@pytest.mark.parametrize("value", [1.0, 9.99949e9, 123456.0, 3.3e12, 0.07])
def test_rounding_up_keeps_the_rate_at_or_above_the_measurement(value):
    rounded = rounded_up(value)
    assert rounded >= Decimal(repr(value))
    assert Decimal(rate_text(rounded)) == rounded


def test_written_file_round_trips_and_merges_other_devices(tmp_path):
    path = tmp_path / "evidence.yaml"
    first = calibration_evidence(_calibration({"float32": [1e11]}, 2e10), "me")
    path.write_text(render_evidence([first], {}, path.name, "dram-to-cpu"))
    second = calibration_evidence(_calibration({"float64": [5e10]}, 3e10), "me")
    second = replace(second, id="other")
    merged = merged_devices(path, second)
    path.write_text(render_evidence(merged, {}, path.name, "dram-to-cpu"))
    loaded = load_evidence_file(path)
    assert set(loaded) == {"box", "other"}
    assert loaded["box"] == first and loaded["other"] == second


def test_steps_share_the_time_budget_and_progress_goes_to_the_stream(capsys):
    seen = []

    def step(budget):
        seen.append(budget)
        return RateMeasurement("k", "1", 10, Timing((0.5,), 0))

    key = RecordKey("compute", "dense-matmul", "float32")
    calibration = _calibration({}, 1e9)
    steps = [CalibrationStep(f"step {i}", key, step) for i in range(4)]
    stream = io.StringIO()
    run_steps(steps, calibration, Settings(budget_seconds=8.0), ProgressBar("calibrate", 4, stream=stream))
    assert len(seen) == 4 and seen[0] == pytest.approx(2.0, abs=0.05)
    assert stream.getvalue().count("\n") == 4 and "step 3" in stream.getvalue()
    assert isinstance(calibration.records[key], MeasuredRecord)


def test_time_calls_stops_at_the_budget_but_not_below_min_repeats():
    timing = time_calls(lambda: time.sleep(0.01), warmup=0, repeats=50, min_repeats=3, budget_seconds=0.001)
    assert timing.repeats == 3 and timing.best >= 0.009


def test_out_that_is_not_evidence_is_refused_before_measuring(tmp_path):
    target = tmp_path / "tensorcost.yaml"
    target.write_text("dims: {batch: 8}\n")
    result = run_tensorcost("calibrate", "--quick", "--out", str(target))
    assert_one_line_error(result, "--out", "not a hardware-evidence file")
    assert target.read_text() == "dims: {batch: 8}\n"


@pytest.mark.parametrize("args, fragment", [
    (("--device", "tpu"), "expected cpu, cuda or cuda:N"),
    (("--threads", "0"), "--threads"),
    (("--id", "has space"), "--id"),
    (("--budget", "-1"), "--budget"),
])
def test_bad_flags_exit_2_with_one_line(args, fragment, tmp_path):
    assert_one_line_error(run_tensorcost("calibrate", "--quick", "--out", str(tmp_path / "e.yaml"), *args), fragment)


def test_cuda_without_a_gpu_says_so(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible; this checks the message when none is")
    result = run_tensorcost("calibrate", "--device", "cuda", "--out", str(tmp_path / "e.yaml"))
    assert_one_line_error(result, "--device", "no CUDA device")
