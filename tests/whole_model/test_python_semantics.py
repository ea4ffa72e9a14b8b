"""Layers decided by plain Python values (tests/whole_model/fixtures/styles/config_driven.py):
tuples repeated and concatenated, `enumerate(zip(...))` and `zip(*lists)` over known sequences run
item by item, string-equality branches, kwargs routed by prefix (dict methods, `startswith`,
string slices, `{**d, k: v}`), `default`/`exists`/`maybe` helpers analysed from their own code,
None-valued module attributes deciding branches, `filter` with a callable object, `iter`/`next`,
closures, lambdas, loops over identical blocks whose body reads the index, nested partials, f-string einsum subscripts, `x.ndim`, `|=`, `int(flag)` and `max`, and
lists and dicts changed in place. Each model's totals are held against torch's FlopCounterMode on
the same classes; what the run cannot count (an undecided attribute, an iterator advanced in a
loop read once for many blocks) stays unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles import config_driven  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(config_driven.__file__)
CASES = {
    "layer-types": ("LayerTypes", {"dim": 16, "depth": 2, "heads": 2, "B": 2, "T": 8}),
    "layer-types-depth-3": ("LayerTypes", {"dim": 24, "depth": 3, "heads": 4, "B": 1, "T": 5}),
    "routed-kwargs": ("Routed", {"dim": 16, "depth": 2, "heads": 2, "B": 2, "T": 8}),
    "defaults-and-closures": ("Defaults", {"dim": 16, "heads": 4, "B": 2, "T": 8}),
    "lists-and-dicts-changed-in-place": ("Mutations", {"dim": 8, "depth": 3, "B": 2, "T": 4}),
    "keywords-grouped-per-layer": ("PerLayer", {"dim": 8, "depth": 3, "B": 2, "T": 4}),
    "blocks-told-apart-by-the-loop-index": ("IndexedKinds", {"dim": 8, "depth": 3, "B": 2, "T": 4}),
    # dicts keyed by ints (`dict.fromkeys(range(n))`), set in each layer's own object by the loop
    "int-keyed-state-per-layer": ("SlotWidths", {"dim": 8, "depth": 3, "B": 2, "T": 4}),
}
CONSTRUCTOR = {"LayerTypes": ("dim", "depth", "heads"), "Routed": ("dim", "depth", "heads"),
               "Defaults": ("dim", "heads"), "Unknown": ("dim", "gated"), "Mutations": ("dim", "depth"),
               "RepeatedNext": ("dim", "depth"), "OpaqueOptions": ("dim",),
               "OpaqueKeywords": ("dim",), "PerLayer": ("dim", "depth"),
               "IndexedKinds": ("dim", "depth"), "SlotWidths": ("dim", "depth")}


def _reference(cls: str, dims: dict, training: bool) -> int:
    torch.manual_seed(0)
    model = getattr(config_driven, cls)(**{name: dims[name] for name in CONSTRUCTOR[cls]})
    return counted_flops(model, torch.randn(dims["B"], dims["T"], dims["dim"]), training=training)


def _analyse(tmp_path, capsys, cls: str, dims: dict, mode: str, assume: tuple = ()) -> dict:
    return model_record(tmp_path, capsys, dims, f"{FIXTURE}:{cls}.forward", {"x": "float32 B T dim"}, mode, assume)


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_totals_equal_flop_counter_mode(tmp_path, capsys, case, mode):
    cls, dims = CASES[case]
    result = _analyse(tmp_path, capsys, cls, dims, mode)
    expected = _reference(cls, dims, mode == "training")
    assert (result["totals"]["flops"], result["totals"]["flops_range"]) == (expected, [expected, expected])
    assert result["undecided"] == [] and result["unresolved_sites"] == 0 and result["not_followed"] == []


def test_layers_follow_the_repeated_type_tuple(tmp_path, capsys):
    """`('f',) + ('a', 'f')` times depth 2 makes six layers, in that order, each run once: the
    attention einsums run twice (two 'a' layers), the feedforward linears four times."""
    dims = {"dim": 16, "depth": 2, "heads": 2, "B": 2, "T": 8}
    sites = _analyse(tmp_path, capsys, "Routed", dims, "inference")["sites"]
    einsums = [s for s in sites if s["expression"].startswith("einsum(f'b h i d")]
    assert [(s["module"], s["executions"]) for s in einsums] == [("body.layers.1.1", 1), ("body.layers.4.1", 1)]
    # attn_dim_head=8 routed to Attention: q (B, h=2, T, 8) against k (B, 2, T, 8)
    assert einsums[0]["flops"] == 2 * 2 * 2 * 8 * 8 * 8
    feedforward = [s["module"] for s in sites if ".1.net." in s["module"]]
    assert feedforward == [f"body.layers.{layer}.1.net.{linear}" for layer in (0, 2, 3, 5) for linear in (0, 2)]
    # ff_mult=2 routed to FeedForward: 16 -> 32 -> 16
    assert {s["flops"] for s in sites if ".1.net." in s["module"]} == {2 * 2 * 8 * 16 * 32}


def test_an_undecided_module_attribute_costs_each_side(tmp_path, capsys):
    """`self.b = nn.Linear(...) if gated else None` with `gated` not configured: `exists(self.b)`
    is not known, so the condition is named, and the call of what `self.b` may be is listed as
    not followed (its cost unknown) — never a guess that it is None or the Linear."""
    dims = {"dim": 8, "B": 2, "T": 4}
    result = _analyse(tmp_path, capsys, "Unknown", dims, "inference")
    one, two = 2 * 2 * 4 * 8 * 8, 2 * 2 * 4 * 8 * 16
    assert result["undecided"] == ["exists(self.b)"]
    assert [n["expression"] for n in result["not_followed"]] == ["self.b(x)"]
    gated = _analyse(tmp_path, capsys, "Unknown", {**dims, "gated": 1}, "inference")
    plain = _analyse(tmp_path, capsys, "Unknown", dims, "inference", ("gated=false",))
    assert gated["totals"]["flops"] == _reference("Unknown", {**dims, "gated": 1}, False) == two
    assert plain["totals"]["flops"] == _reference("Unknown", {**dims, "gated": 0}, False) == one
    assert gated["not_followed"] == plain["not_followed"] == [] and gated["undecided"] == plain["undecided"] == []


def test_an_iterator_advanced_in_a_repeated_loop_is_unknown_after_it(tmp_path, capsys):
    """Three blocks each take `next(flags, None)`: the third flag is True and the extra layer runs.
    The run reads the loop once for the three blocks, so it does not claim where the iterator
    stands: `exists(flag)` is undecided and the range holds the true count."""
    dims = {"dim": 8, "depth": 3, "B": 2, "T": 4}
    result = _analyse(tmp_path, capsys, "RepeatedNext", dims, "inference")
    layer = 2 * 2 * 4 * 8 * 8
    assert _reference("RepeatedNext", dims, False) == 4 * layer
    assert result["totals"]["flops_range"] == [3 * layer, 4 * layer]
    assert result["undecided"] == ["exists(flag)"]


def test_keywords_from_an_unknown_mapping_stay_unknown(tmp_path, capsys):
    """`PrefixedFeedForward(dim, **json.loads(...))`: the callee's `**kwargs` may hold `ff_mult`, and
    `FixedFeedForward(dim, **json.loads(...))` may set `mult`, so the hidden size is not read as
    `dim * 1` (FlopCounterMode counts 2): both linears are listed unresolved and add nothing,
    rather than a wrong total."""
    dims = {"dim": 8, "B": 2, "T": 4}
    for cls in ("OpaqueOptions", "OpaqueKeywords"):  # read through `**kwargs`, or bound to `mult=1`
        result = _analyse(tmp_path, capsys, cls, dims, "inference")
        assert _reference(cls, dims, False) == 2 * (2 * 2 * 4 * 8 * 16)
        assert result["unresolved_sites"] == 2 and result["totals"]["flops"] == 0


ELIF_CHAIN = '''import torch
from torch import nn


def to_layout(x, fmt):
    if fmt == "nhwc":
        x = x.permute(0, 2, 3, 1)
    elif fmt == "nlc":
        x = x.flatten(2).transpose(1, 2)
    elif fmt == "ncl":
        x = x.flatten(2)
    return x


class Stem(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, fmt):
        return self.proj(to_layout(x, fmt))
'''


def test_an_undecided_elif_chain_names_where_the_shape_was_lost(tmp_path, capsys):
    """`elif` arms leaving different shapes under a condition the run cannot decide: the shape is
    lost at the `elif` (its position read like any statement's), and the run says so — it used to
    stop with an internal error when the definition was built by the stdlib-ast front end."""
    path = tmp_path / "layouts.py"
    path.write_text(ELIF_CHAIN)
    result = model_record(tmp_path, capsys, {"B": 2, "dim": 8}, f"{path}:Stem.forward", {"x": "float32 B dim 4 4"})  # `fmt` not given
    assert result["complete"] is False and result["unresolved_sites"] == 1
    lost = result["sites"][0]["shape_lost_at"]
    assert (lost["line"], lost["expression"]) == (10, 'if fmt == "ncl"')  # the innermost arm merges first


UNKNOWN_OPTIONS_PARTIAL = '''import functools
import json

from torch import nn

OPTIONS = '{"eps": 1e-6}'


def norm_factory(layer, **options):
    return functools.partial(layer, **options)


class Net(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        norm = norm_factory(nn.LayerNorm, **json.loads(OPTIONS))
        self.norm = norm(dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(self.norm(x))
'''


def test_a_partial_bound_to_keywords_it_cannot_read_is_called_with_them_unknown(tmp_path, capsys):
    """`functools.partial(layer, **options)` where `options` is not known: calling the partial hands
    the callee keywords it cannot name (it used to stop with an internal error binding them)."""
    path = tmp_path / "norms.py"
    path.write_text(UNKNOWN_OPTIONS_PARTIAL)
    result = model_record(tmp_path, capsys, {"B": 2, "T": 4}, f"{path}:Net.forward", {"x": "float32 B T 8"})
    assert result["totals"]["flops"] == 2 * 2 * 4 * 8 * 8
