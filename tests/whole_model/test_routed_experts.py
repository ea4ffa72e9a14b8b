"""Mixture-of-experts layers as library code writes them (fixtures/styles/routed_experts): a class
decorator that rewrites the experts' `__init__` and `forward` to dispatch on the configured
implementation through a registry, and a grouped-matmul implementation (sort the routed rows by
expert, `F.grouped_mm` against every expert's weights with the offsets). Held against FlopCounterMode
with the grouped-matmul formula (model_runs.flop_counter), inference and training."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles.routed_experts import models  # noqa: E402
from tests.whole_model.model_runs import counted_flops, grouped_mm_flop, model_record  # noqa: E402

FIXTURE = Path(models.__file__)
DIMS = {"B": 2, "T": 8, "hidden_size": 32, "intermediate_size": 16, "num_experts": 4, "top_k": 2, "num_layers": 2}
GROUPED = ("self.config.experts_implementation=grouped",)


def _record(tmp_path, capsys, cls: str, mode: str, assume=GROUPED) -> dict:
    return model_record(tmp_path, capsys, DIMS, f"{FIXTURE}:{cls}.forward", {"x": "float32 B T hidden_size"},
                        mode, assume)


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("cls, gated", [("TinyMoE", True), ("PlainMoE", False)], ids=["gated", "plain"])
def test_grouped_experts_equal_flop_counter_mode(tmp_path, capsys, mode, cls, gated):
    torch.manual_seed(0)
    config = models.MoEConfig(**{k: DIMS[k] for k in ("hidden_size", "intermediate_size", "num_experts",
                                                       "top_k", "num_layers")})
    model = models.TinyMoE(config) if gated else models.PlainMoE(config)
    expected = counted_flops(model, torch.randn(2, 8, 32), training=mode == "training")
    result = _record(tmp_path, capsys, cls, mode)
    assert result["totals"]["flops"] == expected
    # which of torch's two grouped-matmul entry points exists depends on its version: both cost the same
    assert result["complete"] is True and result["undecided"] == ['hasattr(F, "grouped_mm")']
    grouped = [s for s in result["sites"] if "grouped_mm" in s["expression"]]
    assert grouped and all(s["module"] == "layers.experts" and s["resolved"] for s in grouped)


def test_the_eager_loop_over_experts_stays_partial(tmp_path, capsys):
    """The eager forward slices each expert's tokens by a data-dependent index: no shape, listed."""
    result = _record(tmp_path, capsys, "TinyMoE", "inference", ("self.config.experts_implementation=eager",))
    assert result["complete"] is False
    lost = [s["shape_lost_at"]["expression"] for s in result["sites"] if not s["resolved"]]
    assert "hidden[token]" in lost


def test_the_grouped_matmul_formula_counts_what_runs():
    """The reference's formula against the arithmetic of the kernel: every row meets one expert."""
    rows, weights = torch.randn(6, 8), torch.randn(3, 8, 12)  # strides: multiples of 16 bytes
    offsets = torch.tensor([2, 4, 6], dtype=torch.int32)
    out = torch.nn.functional.grouped_mm(rows, weights, offs=offsets)
    by_hand = torch.cat([rows[start:end] @ weights[e] for e, (start, end) in enumerate(((0, 2), (2, 4), (4, 6)))])
    assert torch.allclose(out, by_hand, atol=1e-5)
    assert grouped_mm_flop((6, 8), (3, 8, 12)) == 2 * 6 * 8 * 12
