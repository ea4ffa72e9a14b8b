"""Optional config fields left undecided (fixtures/styles/optional_config.py): `config.n_kv_heads is
None` and `config.query_pad is not None` with neither field in `dims` nor given by `assume`. Each
side is costed (an unset field is not read as a size, so `is None` is not decided False), and in
training the queries that went through the undecided `F.pad` branch keep needing their gradient in
the annotated helper: `flops` equals the dearest real variant's FlopCounterMode count, the range
spans the variants."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import optional_config  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(optional_config.__file__)
DIMS = {"vocab_size": 101, "dim": 32, "heads": 4, "hidden": 48, "depth": 2, "d_head": 8, "B": 2, "T": 8}


def _reference(n_kv_heads, training: bool) -> int:
    torch.manual_seed(0)
    config = SimpleNamespace(**{k: v for k, v in DIMS.items() if k not in ("B", "T", "d_head")}, n_kv_heads=n_kv_heads,
                             query_pad=None)
    model = optional_config.OptionalConfigLM(config)
    ids = torch.randint(0, DIMS["vocab_size"], (DIMS["B"], DIMS["T"]))
    return counted_flops(model, ids, training=training)


def _analyse(tmp_path, capsys, mode: str, assume=()) -> dict:
    return model_record(tmp_path, capsys, DIMS, f"{FIXTURE}:OptionalConfigLM.forward", {"input_ids": "int64 B T"},
                        mode, assume)


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_unset_optional_fields_cost_each_side(tmp_path, capsys, mode):
    result = _analyse(tmp_path, capsys, mode)
    variants = [_reference(n_kv_heads, mode == "training") for n_kv_heads in (None, 1)]
    totals = result["totals"]
    assert totals["flops"] == max(variants)
    assert totals["flops_range"] == [min(variants), max(variants)]
    assert result["unresolved_sites"] == 0
    assert {"config.n_kv_heads is None", "self.config.query_pad is not None"} <= set(result["undecided"])
    modules = {m["path"]: m["class"] for m in result["modules"]}
    assert modules["blocks.attn"] in ("Attention | SharedKeyAttention", "SharedKeyAttention | Attention")


@pytest.mark.parametrize("n_kv_heads", [None, 1])
def test_assumed_field_costs_the_taken_class(tmp_path, capsys, n_kv_heads):
    decided = "true" if n_kv_heads is None else "false"
    result = _analyse(tmp_path, capsys, "training", [f"config.n_kv_heads is None={decided}",
                                                     "self.config.query_pad is not None=false"])
    expected = _reference(n_kv_heads, True)
    assert (result["totals"]["flops"], result["totals"]["flops_range"]) == (expected, [expected, expected])
    assert result["undecided"] == []
