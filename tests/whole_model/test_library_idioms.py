"""Model code written by others (tests/whole_model/fixtures/styles/library_idioms.py), read as
Python reads it: an input the entry takes only through `**kwargs` is bound there, a partial called
with a `**mapping` among its keywords keeps it spliced, and a tuple display's items are each the
value they were (the context named beside `x` needs no gradient because `x` does); a tuple sliced
by a count the code computed, `F.pad` of a tuple spliced from two, `map` of a partial, and
`torch.is_tensor` of a number and of a tensor; einsums torch runs as `mul` (no FLOPs counted) or
after summing a label one operand alone has; a `__new__` that returns a plain layer or makes its
own object; torch's pytrees flattened, rebuilt and mapped; ALiBi slopes picked by a float's
`is_integer()` and made a tensor by `torch.Tensor(list)`; positions biased and masked by einx's
elementwise operations (fixtures/styles/einx_bias.py, when einx is installed). Each total is held against torch's FlopCounterMode on the same classes, inference and training."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("einops")
from tests.whole_model.fixtures.styles import library_idioms  # noqa: E402
from tests.whole_model.model_runs import flop_counter, model_record  # noqa: E402

FIXTURE = Path(library_idioms.__file__)
# name: (class, constructor dims, input dims, tensorcost inputs, torch inputs from the dims)
CASES = {
    "context-through-kwargs": (
        "ConditionedLM", {"num_tokens": 40, "dim": 16, "depth": 2}, {"B": 2, "T": 8, "C": 5},
        {"x": "int64 B T", "context": "float32 B C dim"},
        lambda d: {"x": torch.randint(0, d["num_tokens"], (d["B"], d["T"])),
                   "context": torch.randn(d["B"], d["C"], d["dim"])}),
    "token-shift": (
        "ShiftedLM", {"num_tokens": 40, "dim": 24, "depth": 2}, {"B": 2, "T": 8},
        {"x": "int64 B T"}, lambda d: {"x": torch.randint(0, d["num_tokens"], (d["B"], d["T"]))}),
    "map-of-a-partial": (
        "NormedLM", {"num_tokens": 40, "dim": 16, "depth": 2}, {"B": 2, "T": 8},
        {"x": "int64 B T"}, lambda d: {"x": torch.randint(0, d["num_tokens"], (d["B"], d["T"]))}),
    **{f"is-tensor-{name}": (
        cls, {"num_tokens": 40, "dim": 16, "depth": 2}, {"B": 2, "T": 8},
        {"x": "int64 B T"}, lambda d: {"x": torch.randint(0, d["num_tokens"], (d["B"], d["T"]))})
       for name, cls in (("number", "ScaledLM"), ("tensor", "LearnedScaleLM"))},
    "einsum-products": (
        "RotaryGatedLM", {"num_tokens": 40, "dim": 16, "depth": 2}, {"B": 2, "T": 8},
        {"x": "int64 B T"}, lambda d: {"x": torch.randint(0, d["num_tokens"], (d["B"], d["T"]))}),
    "new-returns-another-object": (
        "GatedLM", {"num_tokens": 40, "dim": 16, "depth": 3}, {"B": 2, "T": 8},
        {"x": "int64 B T"}, lambda d: {"x": torch.randint(0, d["num_tokens"], (d["B"], d["T"]))}),
    "pytrees": (
        "MacaronLM", {"num_tokens": 40, "dim": 16, "depth": 2}, {"B": 2, "T": 8},
        {"x": "int64 B T"}, lambda d: {"x": torch.randint(0, d["num_tokens"], (d["B"], d["T"]))}),
    **{f"alibi-{heads}-heads": (
        "AlibiLM", {"num_tokens": 40, "dim": 12, "depth": 2, "heads": heads}, {"B": 2, "T": 8},
        {"x": "int64 B T"}, lambda d: {"x": torch.randint(0, d["num_tokens"], (d["B"], d["T"]))})
       for heads in (3, 4)},  # a power of two, and one that is not
}


def _reference(cls: str, dims: dict, inputs: dict, training: bool, module=library_idioms) -> int:
    """FlopCounterMode on the fixture class called with keyword inputs (the entry's `**kwargs`)."""
    torch.manual_seed(0)
    model = getattr(module, cls)(**dims)
    model.train(training)
    with flop_counter() as counter:
        out = model(**inputs)
        if training:
            out.sum().backward()
    return counter.get_total_flops()


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_totals_equal_flop_counter_mode(tmp_path, capsys, case, mode):
    cls, constructor, sizes, specs, make_inputs = CASES[case]
    dims = {**constructor, **sizes}
    record = model_record(tmp_path, capsys, dims, f"{FIXTURE}:{cls}.forward", specs, mode)
    expected = _reference(cls, constructor, make_inputs(dims), mode == "training")
    assert record["complete"] is True, (record["not_followed"], record["sites"])
    assert record["totals"]["flops"] == expected


def test_an_input_no_parameter_and_no_kwargs_takes_is_still_refused(tmp_path, capsys):
    """Only a `**kwargs` takes a keyword no parameter names: otherwise the input is a typo."""
    config = tmp_path / "tensorcost.yaml"
    config.write_text("dims: {dim: 8, depth: 1, B: 1, T: 2}\n")
    from tensorcost_lint.cli.main import main

    code = main(["model", "--config", str(config), "--entry", f"{FIXTURE}:CrossLayers.forward",
                 "--input", "x=float32 B T dim", "--input", "contxt=float32 B T dim", "--format", "json"])
    assert code == 2
    assert "has no parameter 'contxt' (inputs.contxt)" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_einx_elementwise_operations_equal_flop_counter_mode(tmp_path, capsys, mode):
    """einx's elementwise operations run no FLOPs FlopCounterMode counts; the shapes they make
    (a relative-position table, a causal mask) flow on, so the attention around them is costed."""
    pytest.importorskip("einx")
    from tests.whole_model.fixtures.styles import einx_bias

    dims = {"num_tokens": 40, "dim": 16, "depth": 2, "B": 2, "T": 8}
    record = model_record(tmp_path, capsys, dims, f"{Path(einx_bias.__file__)}:BiasedLM.forward",
                          {"x": "int64 B T"}, mode)
    constructor = {"num_tokens": 40, "dim": 16, "depth": 2}
    expected = _reference("BiasedLM", constructor, {"x": torch.randint(0, 40, (2, 8))}, mode == "training", einx_bias)
    assert record["complete"] is True, (record["not_followed"], [s for s in record["sites"] if not s["resolved"]])
    assert record["totals"]["flops"] == expected
