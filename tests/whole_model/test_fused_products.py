"""The fused add-and-multiply methods `Tensor.baddbmm` and `Tensor.addmm` (the receiver the added
term, the product's operands by position or keyword) are contractions; a layer flag computed from the
layer's index (`with_bias=index == depth - 1`) builds the layers index by index, and a `@classmethod`
called through `self` binds `cls` to its class: the totals held against FlopCounterMode."""

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.styles.fused_products import BiasedAttention  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

ENTRY = "tests/whole_model/fixtures/styles/fused_products.py:BiasedAttention.forward"
BATCH, STEPS, DIM = 2, 8, 32


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_fused_products_are_costed(tmp_path, capsys, mode):
    record = model_record(tmp_path, capsys, {"B": BATCH, "T": STEPS}, ENTRY, {"x": f"float32 B T {DIM}"}, mode)
    reference = counted_flops(BiasedAttention(), torch.randn(BATCH, STEPS, DIM), training=mode == "training")
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True
    assert {site["expression"].split("(")[0] for site in record["sites"]} >= {"self.bias.addmm", "bias.baddbmm"}


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_flag_of_the_layer_index_and_a_classmethod_through_self(tmp_path, capsys, mode):
    from tests.whole_model.fixtures.styles.last_layer_bias import BiasedLast

    entry = "tests/whole_model/fixtures/styles/last_layer_bias.py:BiasedLast.forward"
    record = model_record(tmp_path, capsys, {"B": BATCH, "T": STEPS}, entry, {"x": "float32 B T 16"}, mode)
    reference = counted_flops(BiasedLast(), torch.randn(BATCH, STEPS, 16), training=mode == "training")
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True and record["undecided"] == []
