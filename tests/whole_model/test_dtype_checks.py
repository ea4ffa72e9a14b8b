"""`if x.dtype != self.proj.weight.dtype: x = x.to(self.proj.weight.dtype)`: a dtype the code never
states is the default one (the config's `default_dtype`), so the check is decided — equal for a
float32 input, different for a bfloat16 one (then cast) — where it was left undecided, each side
costed (transformers' patch embeddings check `pixel_values.dtype` against their weight's)."""

from __future__ import annotations

import pytest

from tests.whole_model.model_runs import model_record

SOURCE = '''
from torch import nn


class Cast(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        if x.dtype != self.proj.weight.dtype:
            x = x.to(self.proj.weight.dtype)
        return self.proj(x)
'''


# traffic: the linear reads x, its weight and bias and writes its output, 4 bytes an element when x
# is float32 (as given, or cast to the float32 weight's dtype), 2 for bfloat16 throughout
@pytest.mark.parametrize("dtype, default, traffic", [
    ("float32", "float32", 384), ("bfloat16", "float32", 384), ("bfloat16", "bfloat16", 192)])
def test_a_dtype_check_against_a_default_dtype_weight_is_decided(tmp_path, capsys, dtype, default, traffic):
    (tmp_path / "cast.py").write_text(SOURCE)
    record = model_record(tmp_path, capsys, {"B": 2, "width": 8}, f"{tmp_path / 'cast.py'}:Cast.forward",
                          {"x": f"{dtype} B width"}, config_lines=f"default_dtype: {default}\n")
    assert record["undecided"] == [] and record["complete"] is True
    assert record["totals"]["flops"] == 2 * 2 * 8 * 8
    assert record["totals"]["traffic_bytes"] == traffic
