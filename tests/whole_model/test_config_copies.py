"""`copy.deepcopy(config)` with a field set on the copy, a set comprehension and `sorted` over
float bases, a dict keyed by floats and read by a float (fixtures/styles/per_base_rotary.py): the
rotary tables each layer gets, held against FlopCounterMode on the same class built from the same
fields, inference and training; a NoPE layer (base 0.0) costs no rotary."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.styles import per_base_rotary  # noqa: E402
from tests.whole_model.model_runs import counted_flops  # noqa: E402

FIXTURE = Path(per_base_rotary.__file__)
CASES = {
    "two-bases-and-nope": [10000.0, 500000.0, 0.0, 10000.0],
    "one-base": [10000.0, 10000.0],
}


def _fields(bases) -> dict:
    return {"vocab": 40, "hidden": 16, "heads": 2, "layer_bases": bases, "rope": {"base": 1.0, "kind": "default"}}


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_layers_get_the_table_of_their_base(tmp_path, capsys, case, mode):
    fields = _fields(CASES[case])
    (tmp_path / "config.json").write_text(json.dumps(fields))
    (tmp_path / "tensorcost.yaml").write_text("dims: {B: 2, T: 6}\n")
    assert main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry",
                 f"{FIXTURE}:MixedBaseModel.forward", "--input", "ids=int64 B T", "--dims-from",
                 str(tmp_path / "config.json"), "--mode", mode, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)["models"][0]
    torch.manual_seed(0)
    model = per_base_rotary.MixedBaseModel(types.SimpleNamespace(**fields))
    expected = counted_flops(model, torch.randint(0, 40, (2, 6)), training=mode == "training")
    assert result["complete"], result["sites"]
    assert result["totals"]["flops"] == expected


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_copied_plain_object_changes_alone(tmp_path, capsys, mode):
    from tests.whole_model.model_runs import model_record

    result = model_record(tmp_path, capsys, {"B": 2, "T": 5}, f"{FIXTURE}:TwoWidths.forward", {"x": "float32 B T 16"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(per_base_rotary.TwoWidths(), torch.randn(2, 5, 16), training=mode == "training")
    assert result["complete"] and result["totals"]["flops"] == expected
