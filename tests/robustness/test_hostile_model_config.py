"""Hostile configs of whole models (issue 22): an entry on a FIFO or a device, integers past
Python's digit limit, control characters in an entry, and a warm `check` that must print exactly
what a fresh one prints. Each is a one-line error (exit 2) or the same bytes, never a hang, a
traceback or a raw escape sequence."""

from __future__ import annotations

import json
import os

import pytest

from tests.run_cli import run_tensorcost

from .cli_runs import assert_one_line_error, clean_env, tensorcost

MODEL = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.empty(64, 32))

    def forward(self, x):
        s = x @ x.transpose(-2, -1)
        return torch.einsum("bij,jk->bik", s, x[0]) @ self.w
"""


def _repo(tmp_path, config: str, model: str = MODEL):
    (tmp_path / ".git").mkdir()
    (tmp_path / "model.py").write_text(model)
    (tmp_path / "tensorcost.yaml").write_text(config)
    return tmp_path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_check_refuses_an_entry_on_a_fifo_at_once(tmp_path):
    repo = _repo(tmp_path, 'models:\n  m: {entry: "fifo.py:M.forward", inputs: {x: "float32 B 64"}}\n')
    os.mkfifo(repo / "fifo.py")
    for command in (("check", "model.py"), ("model",)):
        run = tensorcost(*command, cwd=repo, timeout=60, env=clean_env(TENSORCOST_CACHE_DIR=str(repo / ".c")))
        assert not run.timed_out, f"{command} hung on a FIFO entry"
        assert_one_line_error(run, "fifo.py", "not a regular file (a FIFO)")


def test_check_refuses_an_entry_on_a_device_without_reading_it(tmp_path):
    """`/dev/zero` (linked from the repository) is refused before any byte is read: it lies
    outside the project root, and it is no regular file."""
    repo = _repo(tmp_path, 'models:\n  m: {entry: "zero.py:M.forward", inputs: {x: "float32 B 64"}}\n')
    os.symlink("/dev/zero", repo / "zero.py")
    for command in (("check", "model.py"), ("model",)):
        run = tensorcost(*command, cwd=repo, timeout=60, memory_limit_mib=1024,
                         env=clean_env(TENSORCOST_CACHE_DIR=str(repo / ".c")))
        assert not run.timed_out
        assert_one_line_error(run, "zero.py")
        assert run.peak_mib < 400, run.peak_mib


@pytest.mark.parametrize("where", ["yaml", "toml"])
@pytest.mark.parametrize("digits", [50, 4000, 5000])
def test_a_huge_integer_in_dims_is_one_line_naming_its_size(tmp_path, where, digits):
    number = "1" * digits
    (tmp_path / ".git").mkdir()
    (tmp_path / "model.py").write_text(MODEL)
    if where == "yaml":
        (tmp_path / "tensorcost.yaml").write_text(f"dims: {{B: {number}}}\n")
    else:
        (tmp_path / "pyproject.toml").write_text(f"[tool.tensorcost]\ndims = {{B = {number}}}\n")
    for command in (("check", "model.py"), ("model", "--entry", "model.py:M.forward", "--input", "x=float32 B 64")):
        ran = run_tensorcost(*command, cwd=tmp_path)
        assert ran.returncode == 2, (ran.stdout, ran.stderr[-2000:])
        lines = ran.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in ran.stderr, ran.stderr[-2000:]
        assert number not in lines[0]  # named by its size, never echoed whole
        assert f"{digits} digits" in lines[0] or f"{digits} characters" in lines[0] or "too many digits" in lines[0]


def test_control_characters_of_an_entry_are_escaped_on_stderr(tmp_path):
    repo = _repo(tmp_path, 'models:\n  m: {entry: "mo\\x1b[31mdel.py:M.forward"}\n')
    for command in (("check", "model.py"), ("model",)):
        ran = run_tensorcost(*command, cwd=repo)
        assert ran.returncode == 2
        assert "\x1b" not in ran.stderr and "\\x1b[31m" in ran.stderr, ran.stderr


def test_model_text_escapes_control_characters_of_the_code(tmp_path, capsys):
    model = MODEL.replace("return torch.einsum", "return torch.einsum  # \x1b[2J\n        return torch.einsum")
    repo = _repo(tmp_path, "dims: {B: 2, T: 8}\n", model.replace('"bij,jk->bik"', '"bij,jk->bik"  "\x1b[2J"'))
    ran = run_tensorcost("model", "--entry", "model.py:M.forward", "--input", "x=float32 B T 64", cwd=repo)
    assert ran.returncode == 0, ran.stderr
    assert "\x1b" not in ran.stdout


CONTEXTS = """\
dims: {B: 2, T: 8192}
budgets: {quadratic_bytes: 1KiB}
models:
  m: {entry: "model.py:M.forward", inputs: {x: "float32 B T 64"}}
  t: {entry: "model.py:M.forward", inputs: {x: "float16 B T 64"}, mode: training}
"""


def test_warm_check_json_is_byte_identical_to_no_cache(tmp_path):
    repo = _repo(tmp_path, CONTEXTS)
    env = {"TENSORCOST_CACHE_DIR": str(repo / ".cache")}
    cold = run_tensorcost("check", "model.py", "--format", "json", cwd=repo, env=env)
    warm = run_tensorcost("check", "model.py", "--format", "json", cwd=repo, env=env)
    fresh = run_tensorcost("check", "model.py", "--format", "json", "--no-cache", cwd=repo, env=env)
    assert cold.returncode == warm.returncode == fresh.returncode == 1, cold.stderr
    assert any("contexts" in site and "id" in site for site in json.loads(fresh.stdout)["sites"][1:])
    assert warm.stdout == fresh.stdout == cold.stdout


# -- identifiers as Python folds them (NFKC) -------------------------------------------------------

NFKC_MODEL = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(64, 64)
        self.big = nn.Linear(64, 8192)

    def forward(self, x):
        return self.\u2113in(x)
"""


def test_an_nfkc_spelling_of_an_attribute_is_that_attribute(tmp_path):
    repo = _repo(tmp_path, "dims: {B: 8}\n", NFKC_MODEL)
    ran = run_tensorcost("model", "--entry", "model.py:M.forward", "--input", "x=float32 B 64", "--format", "json",
                         cwd=repo)
    assert ran.returncode == 0, ran.stderr
    model = json.loads(ran.stdout)["models"][0]
    assert model["totals"]["flops"] == 2 * 8 * 64 * 64  # self.lin, not self.big (8,388,608)
    assert model["complete"] if "complete" in model else model["unresolved_sites"] == 0


def test_per_file_lint_folds_identifiers_too(tmp_path):
    source = ('import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n'
              'def f(\u2113hs: Float[Tensor, "b d"], w: Float[Tensor, "e f"]):\n    return lhs @ w\n')
    repo = _repo(tmp_path, "dims: {b: 2, d: 4, e: 5, f: 6}\n", source)
    ran = run_tensorcost("check", "model.py", "--format", "json", cwd=repo)
    codes = [f["code"] for f in json.loads(ran.stdout)["findings"]]
    assert codes == ["TCL101"], ran.stdout  # `lhs` is the annotated `ℓhs`: d=4 against e=5


# -- nothing read outside the project root ---------------------------------------------------------

SECRET_MODEL = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.w = nn.Parameter(torch.empty(config.hidden, 32))

    def forward(self, x):
        return torch.einsum(self.config.client_secret, x, self.w)
"""
SECRET = "sk-live-abcdef,ghij->k"


def _secret_repo(tmp_path, dims_from: str, extra: str = ""):
    (tmp_path / "secret.json").write_text(json.dumps({"client_secret": SECRET, "hidden": 64}))
    repo = tmp_path / "repo"
    repo.mkdir()
    return _repo(repo, f'dims: {{B: 2}}\n{extra}models:\n  m: {{entry: "model.py:M.forward", '
                       f'inputs: {{x: "float32 B 64"}}, dims_from: "{dims_from}"}}\n', SECRET_MODEL)


@pytest.mark.parametrize("dims_from", ["../secret.json", "{outside}/secret.json", "link.json"])
def test_dims_from_outside_the_project_root_is_refused(tmp_path, dims_from):
    dims_from = dims_from.format(outside=tmp_path)
    repo = _secret_repo(tmp_path, dims_from)
    os.symlink(tmp_path / "secret.json", repo / "link.json")
    for command in (("check", "model.py"), ("model",)):
        ran = run_tensorcost(*command, cwd=repo)
        assert ran.returncode == 2, ran.stdout
        assert len(ran.stderr.strip().splitlines()) == 1
        assert "models.m.dims_from" in ran.stderr and "outside the project root" in ran.stderr, ran.stderr
        assert SECRET not in ran.stderr + ran.stdout


def test_an_entry_outside_the_project_root_is_refused(tmp_path):
    (tmp_path / "outside.py").write_text(MODEL)
    repo = _repo(tmp_path / "repo" if (tmp_path / "repo").mkdir() is None else None,
                 'models:\n  m: {entry: "../outside.py:M.forward", inputs: {x: "float32 B 64"}}\n')
    ran = run_tensorcost("model", cwd=repo)
    assert ran.returncode == 2 and "models.m.entry" in ran.stderr and "outside the project root" in ran.stderr


def test_source_roots_opt_in_and_config_strings_are_never_echoed(tmp_path):
    repo = _secret_repo(tmp_path, "../secret.json", "source_roots: [..]\n")
    ran = run_tensorcost("model", "--format", "json", cwd=repo)
    assert ran.returncode == 0, ran.stderr
    model = json.loads(ran.stdout)["models"][0]
    assert SECRET not in ran.stdout and "sk-live" not in ran.stdout
    (site,) = [s for s in model["sites"] if not s["resolved"]]
    assert "config.client_secret (22 characters)" in site["reason"], site
    checked = run_tensorcost("check", "model.py", "--format", "json", cwd=repo)
    assert "sk-live" not in checked.stdout + checked.stderr


def test_imports_above_the_project_root_are_not_read(tmp_path):
    (tmp_path / "helpers.py").write_text("def helper(x):\n    return x @ x.transpose(-2, -1)\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    model = MODEL.replace("from torch import nn\n", "from torch import nn\nfrom helpers import helper\n")
    model = model.replace("        s = x @ x.transpose(-2, -1)\n", "        s = helper(x)\n")
    _repo(repo, "dims: {B: 2, T: 8}\n", model)
    ran = run_tensorcost("model", "--entry", "model.py:M.forward", "--input", "x=float32 B T 64", "--format", "json",
                         cwd=repo)
    assert ran.returncode == 0, ran.stderr
    model = json.loads(ran.stdout)["models"][0]
    assert model["complete"] is False if "complete" in model else model["not_followed"] or model["unresolved_sites"]


def test_a_model_name_with_control_characters_is_escaped_in_the_check_summary(tmp_path):
    repo = _repo(tmp_path, 'dims: {B: 2, T: 64}\nmodels:\n  "m\\x1b[31m": {entry: "model.py:M.forward", '
                           'inputs: {x: "float32 B T 64"}}\n')
    ran = run_tensorcost("check", "model.py", "--no-cache", cwd=repo)
    assert "\x1b" not in ran.stdout + ran.stderr and "models: `m\\x1b[31m`" in ran.stdout, ran.stdout


@pytest.mark.parametrize("digits", [50, 5000])
def test_a_huge_dim_on_the_command_line_is_named_by_its_size(tmp_path, digits):
    repo = _repo(tmp_path, "dims: {B: 2}\n")
    ran = run_tensorcost("check", "model.py", "--dim", "B=" + "1" * digits, cwd=repo)
    assert ran.returncode == 2 and len(ran.stderr) < 400 and "Traceback" not in ran.stderr, ran.stderr[:400]


def test_a_string_from_assume_is_never_echoed(tmp_path):
    """`assume` is a config file's value like `dims_from`'s: a string it gives is named by its
    source and size in a message, never shown (it was printed in a TCL102 message and in the
    model's unresolved-site reasons)."""
    secret = "sk-live-zzz,qq->r"
    repo = _repo(tmp_path, f'dims: {{B: 2}}\nmodels:\n  m: {{entry: "model.py:M.forward", inputs: {{x: "float32 B 64"}}, '
                           f'assume: {{"self.eq": "{secret}"}}}}\n',
                 MODEL.replace("def __init__(self):", "def __init__(self, eq='ij,jk->ik'):")
                      .replace("super().__init__()", "super().__init__()\n        self.eq = eq")
                      .replace('"bij,jk->bik"', "self.eq"))
    for command in (("model",), ("model", "--format", "json"), ("check", "model.py"), ("check", "model.py", "--format", "github")):
        ran = run_tensorcost(*command, cwd=repo)
        assert ran.returncode in (0, 1), ran.stderr
        assert "sk-live" not in ran.stdout + ran.stderr, (command, ran.stdout)
    ran = run_tensorcost("model", cwd=repo)
    assert "read from `assume` (17 characters)" in ran.stdout, ran.stdout
