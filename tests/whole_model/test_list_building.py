"""Lists built by code (fixtures/styles/list_building.py): `extend` adds each item of a known list
as `append` adds one (a conv level of three layers per conv), a list of tensors handed down a tree
and joined with `[x2, x1] + children` holds every tensor, and a change the run does not follow
(`insert`) leaves the list unknown: a partial total, never the empty list's (a complete 0 FLOPs
was reported before). A subclass of nn.Sequential runs the children it registered after
`super().__init__()`. Totals are held against FlopCounterMode."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import list_building  # noqa: E402
from tests.whole_model.model_runs import built_record, counted_flops, model_record  # noqa: E402

FIXTURE = list_building.__file__
BATCH, SIDE = 2, 16


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_lists_built_by_extend_and_joined_equal_flop_counter_mode(tmp_path, capsys, mode):
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{FIXTURE}:Aggregation.forward",
                          {"x": f"float32 B 3 {SIDE} {SIDE}"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(list_building.Aggregation(), torch.randn(BATCH, 3, SIDE, SIDE), training=mode == "training")
    assert record["complete"] is True, record.get("unresolved_sites")
    assert record["totals"]["flops"] == expected


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_sequential_subclass_runs_the_children_it_registered(tmp_path, capsys, mode):
    """`self.add_module('conv1', ...)` and `self.conv2 = ...` after `super().__init__()`: torch's
    forward runs them in order (the run had run the empty Sequential, passing its input through)."""
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{FIXTURE}:Registered.forward",
                          {"x": f"float32 B 3 {SIDE} {SIDE}"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(list_building.Registered(), torch.randn(BATCH, 3, SIDE, SIDE), training=mode == "training")
    assert record["complete"] is True, record.get("unresolved_sites")
    assert record["totals"]["flops"] == expected


def test_a_list_changed_by_insert_is_unknown_not_empty(tmp_path, capsys):
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{FIXTURE}:Reordered.forward",
                          {"x": f"float32 B 3 {SIDE} {SIDE}"})
    assert record["complete"] is False


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_list_appended_to_is_true(tmp_path, capsys, mode):
    """`if to_cat:` after one `append`: the list is not empty, so the tokens are prepended (the
    condition was undecided, and the token count unknown)."""
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{FIXTURE}:PrefixTokens.forward",
                          {"x": "float32 B 4 8"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(list_building.PrefixTokens(), torch.randn(BATCH, 4, 8), training=mode == "training")
    assert record["complete"] is True, record.get("unresolved_sites")
    assert record["totals"]["flops"] == expected


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("build, expected_build", [
    ("StemAndStages()", lambda: list_building.StemAndStages()),
    ("Stage(3, 16, 1)", lambda: list_building.Stage(3, 16, 1)),
    ("Stage(3, 16, 1, kind='plain')", lambda: list_building.Stage(3, 16, 1, kind="plain")),
])
def test_a_sequential_of_spliced_modules_iterates_them_in_order(tmp_path, capsys, mode, build, expected_build):
    """`nn.Sequential(first, *rest)` holds first then rest's modules, and iterating it (`for block in
    self.blocks`, `len`) yields them as a ModuleList does; a comprehension over `range(0)` builds
    nothing. Before, the Sequential was unknown whenever a `*` stood beside another argument, and
    iterating any nn.Sequential lost its callee."""
    from pathlib import Path

    record = built_record(tmp_path, capsys, Path(FIXTURE), build, {"B": BATCH},
                          {"x": f"float32 B 3 {SIDE} {SIDE}"}, mode)
    torch.manual_seed(0)
    expected = counted_flops(expected_build(), torch.randn(BATCH, 3, SIDE, SIDE), training=mode == "training")
    assert record["complete"] is True, record.get("not_followed")
    assert record["totals"]["flops"] == expected


def test_a_repeated_block_spliced_beside_another_is_unknown_not_one_block(tmp_path, capsys):
    """`*[block(c, c) for _ in range(2)]` after `first`: the run builds one block standing for the
    two, so which module runs where in the Sequential is not known: partial, never one block's cost."""
    from pathlib import Path

    record = built_record(tmp_path, capsys, Path(FIXTURE), "Stage(3, 16, 3)", {"B": BATCH},
                          {"x": f"float32 B 3 {SIDE} {SIDE}"}, "inference")
    assert record["complete"] is False and record["not_followed"]
