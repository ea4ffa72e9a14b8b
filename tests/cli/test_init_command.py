"""`tensorcost init`: a starter config naming the dims the code uses, loadable as written, sized
from a Hugging Face config.json where it can be, never overwriting without --force."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.inprocess import tensorcost_in

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MODEL = '''import torch.nn as nn
from jaxtyping import Float
from torch import Tensor


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, q, k):
        q = q  # (B, nh, T, hs)
        k = k  # (B, nh, T, hs)
        return q @ k.transpose(-2, -1)


def project(x: Float[Tensor, "batch seq d_model"], w: Float[Tensor, "d_model on"]):
    return x @ w
'''
HF = {"model_type": "gpt2", "n_embd": 768, "d_model": 64, "seq": 128, "bias": True, "dropout": 0.1,
      "n_layer": 12, "architectures": ["GPT2LMHeadModel"]}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "config.json").write_text(json.dumps(HF))
    return tmp_path


def test_init_lists_every_dim_the_code_names_and_the_file_loads(repo):
    result = tensorcost_in(repo, "init")
    assert (result.returncode, result.stdout) == (0, "Wrote tensorcost.yaml: 9 dims from 1 file (0 sized, 9 to fill in)\n")
    text = (repo / "tensorcost.yaml").read_text()
    assert [line for line in text.splitlines() if line.startswith("  ")] == [
        "  # B: SIZE  # size unknown: shape comment at ./model.py:13 (2 uses)",
        "  # nh: SIZE  # size unknown: shape comment at ./model.py:13 (2 uses)",
        "  # T: SIZE  # size unknown: shape comment at ./model.py:13 (2 uses)",
        "  # hs: SIZE  # size unknown: shape comment at ./model.py:13 (2 uses)",
        "  # n_embd: SIZE  # size unknown: config attribute at ./model.py:9 (2 uses)",
        "  # batch: SIZE  # size unknown: annotation at ./model.py:18",
        "  # seq: SIZE  # size unknown: annotation at ./model.py:18",
        "  # d_model: SIZE  # size unknown: annotation at ./model.py:18 (2 uses)",
        '  # "on": SIZE  # size unknown: annotation at ./model.py:18',
    ]
    assert "bias" not in text and "dropout" not in text  # `bias=config.bias` is no size
    check = tensorcost_in(repo, "check", "--no-cache", ".")
    assert check.returncode == 0 and "costed 0 of 2 call sites" in check.stdout  # loads as written
    filled = "\n".join(line.replace("# ", "", 1).replace("SIZE", "4") if line.startswith("  # ") else line
                       for line in text.splitlines())
    (repo / "tensorcost.yaml").write_text(filled + "\n")
    assert "costed 2 of 2 call sites" in tensorcost_in(repo, "check", "--no-cache", ".").stdout


def test_from_hf_fills_sizes_and_writes_the_models_entry_commented(repo):
    result = tensorcost_in(repo, "init", "--from-hf", "config.json")
    assert result.stdout == "Wrote tensorcost.yaml: 9 dims from 1 file (3 sized from config.json, 6 to fill in)\n"
    text = (repo / "tensorcost.yaml").read_text()
    assert "  n_embd: 768  # config.json; config attribute at ./model.py:9 (2 uses)\n" in text
    assert "  seq: 128  # config.json; annotation at ./model.py:18\n" in text
    assert "  d_model: 64  # config.json; annotation at ./model.py:18 (2 uses)\n" in text
    assert "# models:\n#   gpt2:\n" in text and '#     dims_from: "config.json"\n' in text
    assert "set `entry` and `inputs`, then uncomment it" in text  # the loader reads `models:` (Contract 7)
    assert tensorcost_in(repo, "check", "--no-cache", ".").returncode == 0


def test_never_overwrites_without_force(repo):
    (repo / "tensorcost.yaml").write_text("dims: {seq: 1}\n")
    result = tensorcost_in(repo, "init")
    assert result.returncode == 2 and "tensorcost.yaml: already exists; pass --force to overwrite it" in result.stderr
    assert (repo / "tensorcost.yaml").read_text() == "dims: {seq: 1}\n"
    assert tensorcost_in(repo, "init", "--force").returncode == 0
    assert "# seq: SIZE" in (repo / "tensorcost.yaml").read_text()


def test_pyproject_table_appended_replaced_with_force_and_loaded(repo):
    (repo / "pyproject.toml").write_text('[project]\nname = "m"\n\n[tool.ruff]\nline-length = 100\n')
    result = tensorcost_in(repo, "init", "--pyproject", "--from-hf", "config.json")
    assert result.returncode == 0, result.stderr
    document = tomllib.loads((repo / "pyproject.toml").read_text())
    assert document["project"] == {"name": "m"} and document["tool"]["ruff"] == {"line-length": 100}
    assert document["tool"]["tensorcost"] == {"dims": {"n_embd": 768, "seq": 128, "d_model": 64}}
    assert '# [tool.tensorcost.models.gpt2]\n# entry = "FILE.py:Model.forward"' in (repo / "pyproject.toml").read_text()
    again = tensorcost_in(repo, "init", "--pyproject")
    assert again.returncode == 2 and "pyproject.toml: tool.tensorcost: already exists; pass --force" in again.stderr
    assert tensorcost_in(repo, "init", "--pyproject", "--force").returncode == 0
    document = tomllib.loads((repo / "pyproject.toml").read_text())
    assert document["tool"]["tensorcost"] == {"dims": {}} and document["tool"]["ruff"] == {"line-length": 100}
    check = tensorcost_in(repo, "check", "--no-cache", ".")
    assert check.returncode == 0 and "costed 0 of 2 call sites" in check.stdout


@pytest.mark.parametrize("content, reason", [("{not json", "not JSON"), ("[1, 2]", "expected a JSON object")])
def test_a_bad_hf_config_is_one_line_exit_2(repo, content, reason):
    (repo / "config.json").write_text(content)
    result = tensorcost_in(repo, "init", "--from-hf", "config.json")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1 and reason in result.stderr
    assert not (repo / "tensorcost.yaml").exists()
