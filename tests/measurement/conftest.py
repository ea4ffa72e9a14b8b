"""One quick calibration per test session, and a small model project measured against it.

Calibration and measurement both run on one thread: on a shared two-core machine, multi-threaded
BLAS timings swing by multiples with the neighbours' load, and the property under test (measured
time ≥ bound) needs evidence and runs taken under the same threading.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_tensorcost_process

DEVICE_ID = "test-cpu"

# Small shapes on purpose: every site runs in micro- to milliseconds, so the whole measure test
# takes seconds; each operation family the model knows appears once.
MODEL = '''\
import numpy as np
import torch
import torch.nn.functional as F
from jaxtyping import Float
from torch import Tensor


def attention_block(q: Float[Tensor, "batch heads seq d_head"], k: Float[Tensor, "batch heads seq d_head"],
                    v: Float[Tensor, "batch heads seq d_head"]):
    scores = q @ k.transpose(-2, -1)
    fused = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    by_einsum = torch.einsum("bhqd,bhkd->bhqk", q, k)
    return scores, fused, by_einsum


def mlp(x: Float[Tensor, "batch seq d_model"], w_in: Float[Tensor, "d_model d_ff"],
        w_out: Float[Tensor, "d_ff d_model"]):
    hidden = x @ w_in
    return torch.einsum("bsd,df,fe->bse", x, w_in, w_out), hidden


def projections(a: Float[np.ndarray, "rows inner"], b: Float[np.ndarray, "inner cols"],
                c: Float[np.ndarray, "cols out"], u: Float[np.ndarray, "rows"], v: Float[np.ndarray, "cols"]):
    looped = np.einsum("ri,ic,co->ro", a, b, c)
    blas = np.einsum("ri,ic->rc", a, b, optimize=True)
    outer = np.einsum("r,c->rc", u, v, optimize=True)
    return looped, blas, outer


def wide(x: Float[np.ndarray, "rows inner"], w: Float[np.ndarray, "inner cols"]):
    return np.matmul(x.astype(np.float64), w.astype(np.float64))


def unknown(x: Float[Tensor, "batch mystery"], w: Float[Tensor, "mystery d_model"]):
    return x @ w
'''

CONFIG = f'''\
dims: {{batch: 2, heads: 4, seq: 64, d_head: 32, d_model: 64, d_ff: 128, rows: 96, inner: 64, cols: 48, out: 16}}
evidence: [calibrated.yaml]
hardware: {DEVICE_ID}
traffic_boundary: dram-to-cpu
'''


@pytest.fixture(scope="session")
def calibrated(tmp_path_factory) -> Path:
    """`calibrate --quick` written once; tests copy it where they need it."""
    out = tmp_path_factory.mktemp("evidence") / "calibrated.yaml"
    # Timed runs are subprocesses: they set the BLAS and torch thread counts of the process they run in.
    result = run_tensorcost_process("calibrate", "--quick", "--threads", "1", "--id", DEVICE_ID, "--owner", "tests",
                            "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


def make_project(directory: Path, calibrated: Path) -> Path:
    """A repository with the model file, its config and the calibrated evidence beside it."""
    (directory / ".git").mkdir()  # config discovery stops here
    (directory / "model.py").write_text(MODEL)
    (directory / "tensorcost.yaml").write_text(CONFIG)
    (directory / "calibrated.yaml").write_text(calibrated.read_text())
    return directory


@pytest.fixture
def project(tmp_path, calibrated) -> Path:
    return make_project(tmp_path, calibrated)


@pytest.fixture(scope="session")
def numpy_measurements(tmp_path_factory, calibrated) -> tuple[int, dict, Path]:
    """(exit code, JSON, project) of one `measure --format json` run over the model, shared by the
    tests that read it (each run takes seconds)."""
    import json

    directory = make_project(tmp_path_factory.mktemp("measured"), calibrated)
    result = run_tensorcost_process("measure", "--threads", "1", "--no-progress", "--format", "json",
                            "--output", "measure.json", "model.py", cwd=directory)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads((directory / "measure.json").read_text()), directory


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path
