"""Tensor semantics read from the fixture's own code (tests/whole_model/fixtures/styles/
tensor_semantics.py), the totals held against FlopCounterMode on the same classes."""

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.styles import tensor_semantics  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = tensor_semantics.__file__
BATCH, STEPS = 2, 6
CASES = {
    # a literal 0 size makes an empty tensor; cat onto it gives the other tensor's size
    "empty-then-grown": ("GrowingHistory", {"dim": 8}),
    # F.conv1d on a depthwise module's weight ([C, 1, k] squeezed and unsqueezed): FlopCounterMode
    # counts a grouped convolution's weight gradient with the full channel count, groups times over
    "functional-depthwise-conv": ("ShortConvMixer", {"dim": 8}),
    "grouped-conv-modules": ("GroupedConv", {"dim": 8}),
    # the weight read as a tensor is a parameter: its gradient is costed in training
    "weight-read-as-a-tensor": ("TiedReadout", {"dim": 8}),
    # F.pad by amounts held in a name and computed (`%` of known sizes), after a sum over an axis
    # passed down as `dim=-1`
    "padded-to-whole-chunks": ("ChunkPadded", {"dim": 8, "chunk": 4}),
    # `x.expand(*x.size(), n)`: a call's result spliced as sizes
    "sizes-spliced-from-a-call": ("PairwiseDecay", {"dim": 8}),
    # `x[..., -1:]` and `x[:, :-1]` of a dim whose size is declared
    "negative-slice-bounds": ("ChunkStates", {"dim": 8}),
    # `flag is True` decided from the flag's value (True and False are singletons)
    "identity-with-true": ("HeadGated", {"dim": 8, "heads": 2}),
    # a list grown by `append` over an unrolled loop (and in straight-line code), then stacked or
    # concatenated: the join of the tensors it holds
    "appended-steps-stacked": ("StepwiseScan", {"dim": 8}),
    # `buf[:, t] = y` makes the buffer computed from y: the steps' backward is reached through it
    "written-into-a-buffer": ("FilledBuffer", {"dim": 8}),
    # `zeros_like`, `new_zeros` and `detach` make tensors outside the graph: no gradient flows in
    "made-outside-the-graph": ("FreshTensors", {"dim": 8}),
    # `T // window` of sizes that do not divide: Python's floor (one whole window of 4 in 6 steps;
    # none of 8, an empty slice `k[:, :0]` deciding the branch)
    "whole-windows-floored": ("WindowSummaries", {"dim": 8, "window": 4}),
    "no-whole-window": ("WindowSummaries", {"dim": 8, "window": 8}),
    # `Module(...).to(dtype=...)`: the cast parameters still need a gradient
    "cast-submodule": ("CastParameters", {"dim": 8}),
    # `torch.linalg.solve_triangular`: B's shape, no FLOPs forward; in training the matmul that forms
    # the system's gradient (triangular_solves.py has more)
    "triangular-solve": ("TriangularMix", {"dim": 8}),
    # `h[..., :-tail]` with the bound in a name: all but the last `tail`
    "negative-bound-in-a-name": ("TrailingSlice", {"dim": 8}),
}


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_totals_equal_flop_counter_mode(tmp_path, capsys, case, mode):
    cls, kwargs = CASES[case]
    dims = {"B": BATCH, "T": STEPS, **kwargs}
    torch.manual_seed(0)
    model = getattr(tensor_semantics, cls)(**kwargs)
    expected = counted_flops(model, torch.randn(BATCH, STEPS, kwargs["dim"]), training=mode == "training")
    record = model_record(tmp_path, capsys, dims, f"{FIXTURE}:{cls}.forward", {"x": "float32 B T dim"}, mode)
    assert record["totals"]["flops"] == expected
    assert record["complete"] is True and record["unresolved_sites"] == 0


def test_an_autograd_function_runs_its_forward_and_says_its_backward_is_not_costed(tmp_path, capsys):
    """`_ScaledMix.apply(h, w)` runs the class's static forward with a context object, its result
    shaped as the forward makes it: inference is complete. In training the backward is the
    hand-written method, not the forward's ops' own: the apply is listed as not followed."""
    dims = {"B": BATCH, "T": STEPS, "dim": 8}
    torch.manual_seed(0)
    model = tensor_semantics.HandWrittenBackward(dim=8)
    entry = f"{FIXTURE}:HandWrittenBackward.forward"
    for mode in ("inference", "training"):
        expected = counted_flops(model, torch.randn(BATCH, STEPS, 8), training=mode == "training")
        record = model_record(tmp_path, capsys, dims, entry, {"x": "float32 B T dim"}, mode)
        assert record["unresolved_sites"] == 0
        if mode == "inference":
            assert record["complete"] is True and record["totals"]["flops"] == expected
        else:
            assert record["complete"] is False and record["totals"]["flops"] < expected
            assert [n["expression"][:17] for n in record["not_followed"]] == ["_ScaledMix.apply("]
