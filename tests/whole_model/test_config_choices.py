"""Modules chosen by undecided configuration flags (fixtures/styles/config_choices.py): a factory
function returning one of two MLP classes and a conditional expression picking one of two attention
classes. Undecided, each side is costed: `flops_range` spans the cheapest and the dearest
combination as FlopCounterMode counts them on the built variants, `flops` is the dearest, and the
conditions are named; decided by `assume`, the total is that variant's FlopCounterMode count."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import config_choices  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(config_choices.__file__)
DIMS = {"vocab_size": 101, "dim": 32, "heads": 4, "hidden": 48, "depth": 2, "B": 2, "T": 8}


def _reference(gated: bool, multi_query: bool, training: bool) -> int:
    torch.manual_seed(0)
    sizes = {k: v for k, v in DIMS.items() if k not in ("B", "T")}
    model = config_choices.ChoiceLM(**sizes, gated=gated, multi_query=multi_query)
    ids = torch.randint(0, DIMS["vocab_size"], (DIMS["B"], DIMS["T"]))
    return counted_flops(model, ids, training=training)


def _analyse(tmp_path, capsys, mode: str, assume: list[str]) -> dict:
    return model_record(tmp_path, capsys, DIMS, f"{FIXTURE}:ChoiceLM.forward", {"input_ids": "int64 B T"}, mode,
                        assume)


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_undecided_flags_cost_each_side(tmp_path, capsys, mode):
    result = _analyse(tmp_path, capsys, mode, [])
    variants = [_reference(g, m, mode == "training") for g in (False, True) for m in (False, True)]
    totals = result["totals"]
    assert totals["flops_range"] == [min(variants), max(variants)]
    assert totals["flops"] == max(variants)
    assert result["unresolved_sites"] == 0 and result["not_followed"] == []
    assert {"multi_query", "the module `make_mlp()` returns"} <= set(result["undecided"])
    # each side's sites are reported at the module path the choice was stored under
    assert {(s["module"], s["expression"]) for s in result["sites"]} >= {
        ("blocks.mlp.fc_in", "self.fc_in(x)"), ("blocks.mlp.gate", "self.gate(x)"),
        ("blocks.attn.q", "self.q(x)"), ("blocks.attn.kv", "self.kv(x)")}
    assert len([s for s in result["sites"] if s["expression"] == "q @ k.transpose(-2, -1)"]) == 2  # one per class
    modules = {m["path"]: (m["class"], m["executions"]) for m in result["modules"]}
    assert modules["blocks.attn"] == ("MultiQueryAttention | Attention", DIMS["depth"])  # one side runs per layer
    assert modules["blocks.mlp"] == ("GatedMLP | MLP", DIMS["depth"])


@pytest.mark.parametrize("gated", [False, True])
@pytest.mark.parametrize("multi_query", [False, True])
def test_assumed_flags_cost_the_taken_side(tmp_path, capsys, gated, multi_query):
    result = _analyse(tmp_path, capsys, "inference", [f"gated={str(gated).lower()}",
                                                      f"multi_query={str(multi_query).lower()}"])
    expected = _reference(gated, multi_query, False)
    assert (result["totals"]["flops"], result["totals"]["flops_range"]) == (expected, [expected, expected])
    assert result["undecided"] == []
