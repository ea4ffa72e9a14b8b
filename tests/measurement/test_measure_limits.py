"""`measure` bounded before it runs (issue 14): each site's time is predicted from its bound and a
probe of this machine, sites over --max-site-seconds or the memory cap are skipped and listed
first, warnings come before any progress line, and Ctrl-C keeps the rows already finished."""

from __future__ import annotations

import json

import pytest

from tensorcost_lint.cli.main import main
from tensorcost_lint.measurement import measure_runs

MODEL = '''\
import torch
from jaxtyping import Float
from torch import Tensor


def huge(a: Float[Tensor, "n n"], b: Float[Tensor, "n n"]):
    return a @ b


def small(x: Float[Tensor, "m m"], w: Float[Tensor, "m m"]):
    return x @ w


def small_too(x: Float[Tensor, "m m"], w: Float[Tensor, "m m"]):
    return torch.einsum("ij,jk->ik", x, w)


def small_three(x: Float[Tensor, "m m"], w: Float[Tensor, "m m"]):
    return torch.matmul(x, w)
'''
FAST = ["--threads", "1", "--repeats", "3", "--warmup", "0", "--seconds-per-site", "0.05"]


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "model.py").write_text(MODEL)
    # 16384^3: 8.8 TFLOP; 4.29 GB held (two operands, a transposed copy, the result);
    # h100-sxm evidence, which this machine is not
    (tmp_path / "tensorcost.yaml").write_text("dims: {n: 16384, m: 64}\nhardware: h100-sxm\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(capsys, *args):
    code = main(["measure", *FAST, "--format", "json", "--output", "measure.json", "model.py", *args])
    captured = capsys.readouterr()
    return code, captured.err.splitlines(), json.loads(open("measure.json").read())


def test_a_site_predicted_over_the_limit_is_skipped_and_listed_before_anything_runs(project, capsys):
    code, err, data = _run(capsys, "--memory-cap", "64GiB")
    assert code == 0
    by_line = {m["line"]: m for m in data["measurements"]}
    huge = by_line[7]
    assert huge["status"] == "skipped" and huge["measured_median_seconds"] is None
    assert huge["reason"].startswith("predicted ") and "over --max-site-seconds 10;" in huge["reason"]
    assert all(by_line[line]["status"] == "held" for line in (11, 15, 19))
    assert data["max_site_seconds"] == 10.0 and data["interrupted"] is False
    listed = err.index(
        "tensorcost measure: not running 1 site predicted over --max-site-seconds 10 or the memory cap:")
    assert err[listed + 1].startswith("tensorcost measure:   #0 model.py:7:12 matmul: predicted ")
    first_progress = next(i for i, line in enumerate(err) if line.startswith("measure ["))
    assert listed < first_progress
    assert err[first_progress - 1].startswith("tensorcost measure: running 3 sites, predicted about ")


def test_a_site_over_the_memory_cap_is_listed_with_its_bytes(project, capsys):
    code, err, data = _run(capsys, "--memory-cap", "1GiB", "--max-site-seconds", "1e9")
    huge = data["measurements"][0]
    assert huge["status"] == "skipped"
    assert huge["reason"].startswith("needs about 4.29 GB of synthetic data, over the memory cap 1.07 GB")
    assert any(line.startswith("tensorcost measure:   #0 model.py:7:12 matmul: needs about 4.29 GB") for line in err)


def test_warnings_come_before_the_first_progress_line(project, capsys):
    _, err, data = _run(capsys)
    warning = next(i for i, line in enumerate(err) if "warning: bounds use h100-sxm evidence" in line)
    first_progress = next(i for i, line in enumerate(err) if line.startswith("measure ["))
    assert warning == 0 < first_progress
    assert data["warnings"] and "calibrate did not measure on this machine" in data["warnings"][0]
    # the plain (non-terminal) progress lines carry an ETA from the predicted times
    assert "ETA " in err[first_progress]


def test_ctrl_c_writes_the_finished_rows_and_exits_130(project, capsys, monkeypatch):
    calls = []
    measure_one = measure_runs.measure_one

    def interrupted_on_the_second_site(workload, backend, settings):
        calls.append(workload.id)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return measure_one(workload, backend, settings)

    monkeypatch.setattr(measure_runs, "measure_one", interrupted_on_the_second_site)
    code, err, data = _run(capsys)
    assert code == 130
    assert err[-1] == "tensorcost: interrupted: wrote the 2 finished of 4 sites"
    assert data["interrupted"] is True
    rows = [(m["line"], m["status"]) for m in data["measurements"]]
    assert rows == [(7, "skipped"), (11, "held")]


def test_max_site_seconds_must_be_positive(project, capsys):
    assert main(["measure", "--max-site-seconds", "0", "model.py"]) == 2
    assert capsys.readouterr().err.strip().endswith("--max-site-seconds: 0.0: must be a positive number of seconds")


def test_a_terminal_gets_tqdm_weighted_by_predicted_seconds():
    pytest.importorskip("tqdm")
    import io

    from tensorcost_lint.measurement.progress import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    bar = ProgressBar("measure", 2, stream=stream, weights=[1.0, 3.0])
    bar.step("a.py:1:1 matmul")
    bar.step("a.py:2:1 matmul")
    assert bar._tqdm.n == 1.0  # the first site's predicted second is done, three to go
    bar.close()
    assert "measure 100%|" in stream.getvalue() and "], 1/2  a.py:2:1 matmul" in stream.getvalue()
