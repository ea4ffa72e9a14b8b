"""The fused add-and-multiply methods `Tensor.baddbmm` and `Tensor.addmm` (the receiver the added
term, the product's operands by position or keyword) are contractions; a layer flag computed from the
layer's index (`with_bias=index == depth - 1`) builds the layers index by index, and a `@classmethod`
called through `self` binds `cls` to its class: the totals held against FlopCounterMode."""

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.styles.fused_products import BiasedAttention  # noqa: E402
from tests.whole_model.model_runs import record_and_reference  # noqa: E402

BATCH, STEPS, DIM = 2, 8, 32


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_fused_products_are_costed(tmp_path, capsys, mode):
    record, reference = record_and_reference(tmp_path, capsys, BiasedAttention(), {"B": BATCH, "T": STEPS},
                                             f"float32 B T {DIM}", torch.randn(BATCH, STEPS, DIM), mode)
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True
    assert {site["expression"].split("(")[0] for site in record["sites"]} >= {"self.bias.addmm", "bias.baddbmm"}


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_flag_of_the_layer_index_and_a_classmethod_through_self(tmp_path, capsys, mode):
    from tests.whole_model.fixtures.styles.last_layer_bias import BiasedLast

    record, reference = record_and_reference(tmp_path, capsys, BiasedLast(), {"B": BATCH, "T": STEPS},
                                             "float32 B T 16", torch.randn(BATCH, STEPS, 16), mode)
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True and record["undecided"] == []
