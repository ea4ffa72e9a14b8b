"""`isinstance(value, T)` in a whole-model run (whole_model/python/data_instances.py): one row per
kind of value the run holds, each tested against a type it is an instance of and one it provably
is not, in a model whose forward picks a wide or a narrow layer by the test; a test the run cannot
decide is never read as either. Then the realistic models of fixtures/styles/isinstance_values.py
(torchvision's dense layer over a tensor or a list of them, timm-style `to_2tuple` and norm-layer
factories), their totals counted by hand and held against FlopCounterMode."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest

from tensorcost_lint.whole_model.python import data_instances
from tests.whole_model.fixtures.styles import isinstance_values
from tests.whole_model.model_runs import counted_flops, model_record

BATCH, FEATURES, WIDE, NARROW = 2, 4, 5, 3
# FLOPs of the forward when the test is True (the wide layer runs) and when it is False
FLOPS = {True: 2 * BATCH * FEATURES * WIDE, False: 2 * BATCH * FEATURES * NARROW}


def _case(value: str, types: str, expected: bool | None, setup: str = "") -> tuple:
    return value, types, expected, setup


# row of data_instances.ROWS (or the value's own reading) -> cases (value, types, decision, setup)
CASES = {
    "none": [_case("None", "type(None)", True), _case("None", "(int, torch.Tensor)", False),
             _case("None", "object", True)],
    "bool": [_case("True", "int", True), _case("self.flag", "bool", True, "self.flag = False"),
             _case("True", "(float, str)", False)],
    "int": [_case("0", "int", True), _case("-1", "(tuple, list)", False), _case("0", "bool", False),
            _case("0.", "float", None)],  # `0.` is read as the int 0: whether it is a float is not known
    "size": [_case("x.shape[-1]", "int", True), _case("4", "tuple", False),
             _case("4", "collections.abc.Iterable", False)],
    "float": [_case("0.5", "float", True), _case("0.5", "(int, torch.Tensor)", False)],
    "number": [_case("x.sum().item()", "torch.Tensor", False), _case("x.sum().item()", "float", None)],
    "str": [_case("'gelu'", "str", True), _case("'gelu'", "(list, tuple)", False),
            _case("'gelu'", "collections.abc.Sequence", True), _case("'gelu'", "typing.Mapping", False)],
    "dict": [_case("{'dim': 4}", "dict", True), _case("dict(dim=4)", "collections.abc.Mapping", True),
             _case("{'dim': 4}", "(list, tuple)", False)],
    "tuple": [_case("(4, 4)", "tuple", True), _case("(4, 4)", "(list, tuple)", True), _case("(4, 4)", "list", False),
              _case("(4, 4)", "torch.Tensor", False)],
    "list": [_case("[4, 4]", "(list, tuple)", True), _case("[x, x]", "Tensor", False), _case("[4]", "tuple", False),
             _case("feats", "list", True, "feats = [x]\nfeats.append(x)"),
             _case("feats", "torch.Tensor", False, "feats = [x]\nfeats.append(x)")],
    "sequence": [_case("x.shape", "torch.Tensor", False), _case("x.chunk(2, -1)", "collections.abc.Iterable", True),
                 _case("x.chunk(2, -1)", "list", None), _case("{4, 5}", "torch.Tensor", False),
                 _case("{4, 5}", "set", None)],  # a set is a sequence of no display kind
    "tensor": [_case("x", "torch.Tensor", True), _case("x", "(int, float)", False),
               _case("x", "torch.fx.Proxy", False)],  # an eager tensor is no tracing proxy
    "class": [_case("Block", "type", True), _case("Block", "(int, tuple)", False),
              _case("Block", "functools.partial", False)],
    "callable": [_case("functools.partial(nn.LayerNorm, eps=1e-6)", "functools.partial", True),
                 _case("helper", "types.FunctionType", True), _case("helper", "str", False)],
    "object": [_case("self.block", "Block", True), _case("self.block", "Other", False)],
    "layer": [_case("self.wide", "torch.Tensor", False), _case("self.wide", "(int, dict)", False)],
    "torch module": [_case("self.seq", "nn.Module", True), _case("self.seq", "(int, list)", False)],
    "module": [_case("helpers", "types.ModuleType", True), _case("helpers", "(str, torch.Tensor)", False)],
    "dtype": [_case("x.dtype", "torch.dtype", True), _case("x.dtype", "str", False)],
    # how the types are written: a builtin's shadowed name, types held in a variable, `A | B`
    "names": [_case("(4, 4)", "tuple", None, "tuple = list"), _case("None", "kinds", None, "kinds = (int, str)"),
              _case("'gelu'", "(*kinds,)", None, "kinds = (int, str)"), _case("x", "int | float", False),
              _case("4", "int | str", True)],
}
_PARAMS = [pytest.param(row, *case, id=f"{row}-{i}") for row, cases in CASES.items() for i, case in enumerate(cases)]


def _source(value: str, types: str, setup: str) -> str:
    return textwrap.dedent('''\
        import collections.abc
        import functools
        import types
        import typing

        import helpers
        import torch
        from torch import Tensor, nn


        def helper():
            return 1


        class Block(nn.Module):
            pass


        class Other(nn.Module):
            pass


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.wide = nn.Linear({features}, {wide})
                self.narrow = nn.Linear({features}, {narrow})
                self.block = Block()
                self.seq = nn.Sequential(nn.ReLU())

            def forward(self, x):
        {setup}
                if isinstance({value}, {types}):
                    return self.wide(x)
                return self.narrow(x)
        ''').format(features=FEATURES, wide=WIDE, narrow=NARROW, value=value, types=types,
                    setup=textwrap.indent(setup or "pass", " " * 8))


def test_every_row_of_the_table_has_cases():
    assert set(data_instances.ROWS) <= set(CASES), sorted(set(data_instances.ROWS) - set(CASES))


@pytest.mark.parametrize("row, value, types, expected, setup", _PARAMS)
def test_isinstance_picks_the_branch_python_takes(tmp_path, capsys, monkeypatch, row, value, types, expected, setup):
    (tmp_path / ".git").mkdir()  # the repository root: `import helpers` is the module beside the model
    (tmp_path / "helpers.py").write_text("SCALE = 2\n")
    path = tmp_path / "model.py"
    path.write_text(_source(value, types, setup))
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{path}:Model.forward", {"x": f"float32 B {FEATURES}"})
    if expected is None:  # undecided: neither branch is taken as the one that runs
        assert not (record["complete"] and record["totals"]["flops"] in FLOPS.values()), record["totals"]
        return
    assert record["complete"] is True, (record["not_followed"], record["unresolved_sites"])
    assert record["totals"]["flops"] == FLOPS[expected]
    torch = pytest.importorskip("torch")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "helpers", raising=False)
    spec = importlib.util.spec_from_file_location(f"isinstance_row_{row}_{abs(hash((value, types)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the same model built by torch: Python's own decision
    assert counted_flops(module.Model(), torch.randn(BATCH, FEATURES), training=False) == FLOPS[expected]


# the fixture's models, their inference totals counted by hand (FlopCounterMode counts convolutions
# and matmuls at 2 FLOPs a multiply-add; norms, ReLU and dropout are not counted)
MODELS = {
    # 8x4x4 maps, batch 2: the stem is called on the tensor alone (a 1x1 conv 8 -> 8), each block
    # layer on the list so far (8 -> 4, then 8 + 4 -> 4), the head on all 16 channels (16 -> 6)
    "dense-layer-on-a-tensor-or-a-list": (
        "DenseNet", "float32 B 8 4 4", (2, 8, 4, 4),
        2 * 2 * 16 * (8 * 8 + 8 * 4 + 12 * 4 + 16 * 6)),
    # 3x8x8 images in 4x4 patches (4 tokens of 16): the patch conv (3*4*4 -> 16), the extra layer
    # its norm factory's partial enables (16 -> 16), the mixer (16 -> 24) and the output layer
    # sized by the schedule being a tuple (24 -> 12)
    "layer-factories": (
        "PatchMixer", "float32 B 3 8 8", (2, 3, 8, 8),
        2 * 2 * 4 * (48 * 16 + 16 * 16 + 16 * 24 + 24 * 12)),
}


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(MODELS))
def test_models_that_branch_on_isinstance_total_as_counted_by_hand(tmp_path, capsys, case, mode):
    name, spec, shape, by_hand = MODELS[case]
    record = model_record(tmp_path, capsys, {"B": 2}, f"{isinstance_values.__file__}:{name}.forward", {"x": spec}, mode)
    assert record["complete"] is True, (record["not_followed"], record["unresolved_sites"])
    if mode == "inference":
        assert record["totals"]["flops"] == by_hand
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = getattr(isinstance_values, name)()
    assert counted_flops(model, torch.randn(*shape), training=mode == "training") == record["totals"]["flops"]
