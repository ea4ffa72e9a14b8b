"""Torch functions called with a Python number first (`torch.pow(10000, t)`, `torch.sub(0, t)`) keep
the tensor's shape, so the tables built with them reach the attention scores; a strided slice of a
width given as a dim (`[:, 0::2]` of an even width) has Python's length, and an offset computed as a
negative int (`max(0, rows - steps)`) is Python's int; a table's entry that is a module-level value
a factory built is that value; a `while` whose test is false on entry runs no pass (its `else` runs); `torch.arange` with a whole
float step (`2.0`, `-1.0`) or a negative end counts its elements as torch does:
the totals held against
FlopCounterMode."""

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.styles.number_first import (  # noqa: E402
    CountdownPositions, InterleavedPositions, OffsetBias, SlopedAttention)  # noqa: E402
from tests.whole_model.model_runs import record_and_reference  # noqa: E402

BATCH, STEPS, DIM = 2, 8, 32
SIZES = {"B": BATCH, "T": STEPS}


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_number_first_tables_reach_the_scores(tmp_path, capsys, mode):
    record, reference = record_and_reference(tmp_path, capsys, SlopedAttention(), SIZES, f"float32 B T {DIM}",
                                             torch.randn(BATCH, STEPS, DIM), mode)
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_strided_halves_of_a_dim_width_join_back_to_it(tmp_path, capsys, mode):
    record, reference = record_and_reference(tmp_path, capsys, InterleavedPositions(DIM), {**SIZES, "width": DIM}, "float32 B T width",
                                             torch.randn(BATCH, STEPS, DIM), mode)
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_negative_offsets_are_python_ints(tmp_path, capsys, mode):
    record, reference = record_and_reference(tmp_path, capsys, OffsetBias(), SIZES, f"float32 B T {DIM}",
                                             torch.randn(BATCH, STEPS, DIM), mode)
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_table_entry_built_at_import_is_its_value(tmp_path, capsys, mode):
    from tests.whole_model.fixtures.styles.activation_table import TableMLP

    record, reference = record_and_reference(tmp_path, capsys, TableMLP(), SIZES, "float32 B T 16",
                                             torch.randn(BATCH, STEPS, 16), mode)
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_while_false_on_entry_runs_no_pass(tmp_path, capsys, mode):
    from tests.whole_model.fixtures.styles.rank_guards import RankGuarded

    record, reference = record_and_reference(tmp_path, capsys, RankGuarded(), SIZES, "float32 B T 16",
                                             torch.randn(BATCH, STEPS, 16), mode)
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_arange_with_float_steps_and_a_negative_end(tmp_path, capsys, mode):
    record, reference = record_and_reference(tmp_path, capsys, CountdownPositions(), SIZES, f"float32 B T {DIM}",
                                             torch.randn(BATCH, STEPS, DIM), mode)
    assert record["totals"]["flops"] == reference
    assert record["complete"] is True
