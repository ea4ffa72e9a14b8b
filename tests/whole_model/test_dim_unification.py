"""Sound dim unification (whole_model/values/dim_unification.py): an input dim no `dims` sizes is bound to
the size a layer it meets requires, said in `unified_dims` and the text report; a contradiction
stays a contraction mismatch; two unsized names stay unknown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tensorcost_lint.cli.main import main
from tests.whole_model.fixtures.styles import unsized_inputs
from tests.whole_model.model_runs import model_record

FIXTURE = Path(unsized_inputs.__file__)
DIMS = {"B": 2, "T": 8}


def _record(tmp_path, capsys, cls: str, inputs: dict, mode: str = "inference") -> dict:
    return model_record(tmp_path, capsys, DIMS, f"{FIXTURE}:{cls}.forward", inputs, mode)


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_an_unsized_input_width_is_the_in_features_it_meets(tmp_path, capsys, mode):
    torch = pytest.importorskip("torch")
    from tests.whole_model.model_runs import counted_flops

    result = _record(tmp_path, capsys, "Probe", {"x": "float32 B T d_in"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(unsized_inputs.Probe(), torch.randn(DIMS["B"], DIMS["T"], 768), training=mode == "training")
    assert result["complete"] and result["totals"]["flops"] == expected
    (unified,) = result["unified_dims"]
    assert (unified["dim"], unified["size"], unified["line"], unified["expression"]) == (
        "d_in", 768, 21, "self.proj(pooled)")
    assert unified["from"].startswith("contracted dim")


def test_the_text_report_says_which_dim_was_unified_and_where(tmp_path, capsys):
    config = tmp_path / "tensorcost.yaml"
    config.write_text(f"dims: {json.dumps(DIMS)}\n")
    assert main(["model", "--config", str(config), "--entry", f"{FIXTURE}:Probe.forward",
                 "--input", "x=float32 B T d_in"]) == 0
    text = capsys.readouterr().out
    assert "dim unified: d_in = 768, from contracted dim 768 at " in text
    assert "unsized_inputs.py:21 (self.proj(pooled))" in text and "totals (complete)" in text


def test_a_width_two_layers_disagree_on_is_a_mismatch_not_a_pick(tmp_path, capsys):
    result = _record(tmp_path, capsys, "TwoReaders", {"x": "float32 B T d_in"})
    assert not result["complete"] and result["unresolved_sites"] == 1
    (unresolved,) = [site for site in result["sites"] if not site["resolved"]]
    assert unresolved["expression"] == "self.narrow(x)" and "contraction mismatch" in unresolved["reason"]
    assert [(u["dim"], u["size"], u["expression"]) for u in result["unified_dims"]] == [("d_in", 768, "self.wide(x)")]


def test_two_unsized_names_stay_unknown(tmp_path, capsys):
    result = _record(tmp_path, capsys, "Bilinear", {"x": "float32 B T d", "y": "float32 B S e"})
    assert result["unified_dims"] == [] and result["unresolved_sites"] == 1
    assert "cannot tell whether" in result["sites"][0]["reason"]


def test_declared_sizes_are_never_replaced(tmp_path, capsys):
    """`d_in: 512` declared: the Linear(768) contraction is a mismatch, not a rebinding."""
    result = model_record(tmp_path, capsys, {**DIMS, "d_in": 512}, f"{FIXTURE}:Probe.forward", {"x": "float32 B T d_in"})
    assert result["unified_dims"] == [] and not result["complete"]
    assert any("contraction mismatch" in (site["reason"] or "") for site in result["sites"])
