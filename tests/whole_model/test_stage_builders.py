"""A trunk made by a builder object from block strings (fixtures/styles/stage_builders.py): the
Python a builder runs is followed as Python runs it — `op[0]` of a known string is its character,
`[copy.deepcopy(args) for _ in range(n)]`
is n equal dicts, a list grown by appends is indexed and reversed (`repeats[::-1]`) and a list of
dicts is iterated dict by dict, `int(options.get("d", 0)) > 0` is a bool where it is assigned, the
builder object is called (`__call__`), `"silu" in dir(F)` is true for a function torch has (`nn.Hardsigmoid` a shape-preserving module),
`round` passed as a value is called, a `try` whose body certainly raises nothing takes no handler
(`super().__init__()` into nn.Module is such a body), `F.batch_norm` keeps its input's shape, a
batch norm's `momentum`, `track_running_stats` and buffers (`num_batches_tracked.add_(1)`) are
what torch's constructor set, and a weight init walking `named_children()` runs over the children
the modules registered (past a list of data and a module chosen by an undecided rate). The totals
are held against FlopCounterMode. A probe that may raise (`try: cls(8, rd_ratio=1.0)
except TypeError: ...` over a constructor the run cannot read whole) leaves the flag it sets
unknown, never the handler's value by fiat; a name torch's tables do not
hold (`"nosuch" in dir(F)`) is undecided, not false."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import stage_builders  # noqa: E402
from tests.whole_model.model_runs import built_record, counted_flops, model_record  # noqa: E402

FIXTURE = Path(stage_builders.__file__)
BATCH, SIDE = 2, 32


def _record(tmp_path, capsys, build: str, mode: str) -> dict:
    return built_record(tmp_path, capsys, FIXTURE, build, {"batch": BATCH},
                        {"x": f"float32 batch 3 {SIDE} {SIDE}"}, mode)


def _reference(build: str, mode: str) -> int:
    torch.manual_seed(0)
    model = getattr(stage_builders, build)()
    return counted_flops(model, torch.randn(BATCH, 3, SIDE, SIDE), training=mode == "training")


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("build", ["build", "build_deeper"])
def test_built_trunk_equals_flop_counter_mode(tmp_path, capsys, build, mode):
    record = _record(tmp_path, capsys, f"{build}()", mode)
    assert record["not_followed"] == [] and record["unresolved_sites"] == 0, record["not_followed"]
    assert record["complete"] is True
    assert record["totals"]["flops"] == _reference(build, mode)


def test_the_builder_makes_the_stages_the_strings_say():
    model = stage_builders.build_deeper()
    # 1 + 2 + (1 + 2) blocks, scaled by 1.5 from the last block of each stage back: 2, 3, 2 + 3
    assert [len(stage) for stage in model.blocks] == [2, 3, 5]
    assert isinstance(model.bn1.act, torch.nn.SiLU) and isinstance(model.blocks[0][0].bn1.act, torch.nn.ReLU)
    assert isinstance(model.blocks[0][0].se.gate, torch.nn.Hardsigmoid)
    assert model.blocks[1][0].se.reduce.out_channels == round(32 * 0.25 / 4)


def test_a_probe_that_may_raise_leaves_its_flag_undecided(tmp_path, capsys):
    record = _record(tmp_path, capsys, "build_probed()", "inference")
    assert _reference("build_probed", "inference") > 0
    # the blocks are built with or without a ratio: their widths are not known (a partial total, never
    # the handler's `se_has_ratio = False` taken as what ran)
    assert record["complete"] is False and record["unresolved_sites"] > 0


def test_a_name_the_tables_do_not_hold_is_not_known_to_be_absent(tmp_path, capsys):
    source = tmp_path / "probe_dir.py"
    source.write_text(
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(3, 8) if 'no_such_function' in dir(F) else nn.Linear(3, 4)\n\n"
        "    def forward(self, x):\n        return self.proj(x)\n")
    record = model_record(tmp_path, capsys, {"B": 2}, f"{source}:Net.forward", {"x": "float32 B 3"})
    assert record["complete"] is False
    assert record["totals"]["flops_range"] == [2 * 2 * 3 * 4, 2 * 2 * 3 * 8]
