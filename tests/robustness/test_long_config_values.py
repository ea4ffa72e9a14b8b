"""A 100 KB value in a config field is named in its one-line error by its ends and its length, never
echoed whole (issue 22, minor: a 100 KB qualname was echoed whole; the same held for every field
whose error quotes the value)."""

from __future__ import annotations

import pytest

from tests.run_cli import run_tensorcost

from .cli_runs import assert_one_line_error

LONG = "x" * 100_000
MODEL = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        return x @ x\n"
ENTRY = "dims: {{B: 2}}\nmodels:\n  m: {{entry: model.py:M.forward, inputs: {{x: \"float32 B 64\"}}{extra}}}\n"


@pytest.mark.parametrize("config, key", [
    (f'dims: {{B: 2}}\nmodels:\n  m: {{entry: model.py:M.forward, inputs: {{x: "float32 B {LONG}@"}}}}\n', "inputs.x"),
    (ENTRY.format(extra=f", mode: {LONG}"), "models.m.mode"),
    (ENTRY.format(extra=f", dims_from: {LONG}.json"), "models.m.dims_from"),
    (f'dims: {{B: 2}}\nmodels:\n  m: {{entry: "{LONG}.py:M.forward", inputs: {{x: "float32 B 64"}}}}\n', "entry"),
    (f"hardware: {LONG}\n", "hardware"),
    (f"default_dtype: {LONG}\n", "default_dtype"),
    (f"select: [TCL{LONG}]\n", "select"),
    (f'budgets: {{quadratic_bytes: "{LONG}"}}\n', "budgets.quadratic_bytes"),
], ids=["input-spec", "mode", "dims_from", "entry-file", "hardware", "default_dtype", "select", "byte-size"])
def test_a_long_config_value_is_shortened_in_its_error(tmp_path, config, key):
    (tmp_path / ".git").mkdir()
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "tensorcost.yaml").write_text(config)
    for command in (("check", "model.py"), ("model",)):
        ran = run_tensorcost(*command, cwd=tmp_path)
        assert_one_line_error(ran, key, " characters)")
        assert len(ran.stderr) < 1000, (command, len(ran.stderr), ran.stderr[:300])
