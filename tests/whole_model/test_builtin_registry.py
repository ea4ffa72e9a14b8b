"""Every entry of the builtin registry (whole_model/library/builtin_registry.py) has its row here: a
model whose layer width (or whose forward's shape) is decided by that builtin or stdlib callable,
run by `tensorcost model` and held against FlopCounterMode on the same model built by torch. A
registry entry without a row fails the meta-test, so adding a builtin is one entry plus one row.

Each row is (code at module level, code in `__init__` before the layer, the width expression,
the forward's body). The widths are small and distinct from the input's, so a wrong value shows."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

torch = pytest.importorskip("torch")

from tensorcost_lint.whole_model.library import builtin_registry  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

BATCH, FEATURES = 2, 4
PROJECT = "return self.proj(x)"


def _row(width: str, init: str = "", module: str = "", forward: str = PROJECT):
    return module, init, width, forward


# a math function's row: an argument in its domain, its result scaled to a width of at least 2
_MATH_ARGUMENTS = {"log": "8", "log2": "8", "log10": "1000", "log1p": "7", "exp": "1.5", "expm1": "1.5",
                   "sqrt": "10", "pow": "2, 3", "sin": "1", "cos": "0.5", "tan": "1", "atan": "2",
                   "atan2": "1, 2", "tanh": "1", "fabs": "-3.5", "hypot": "3, 4", "floor": "3.7", "ceil": "3.2",
                   "trunc": "4.9", "gcd": "12, 18", "isqrt": "20", "lcm": "4, 6"}
ROWS = {
    "all": _row("2 + all([1, 2, 3])"),
    "any": _row("3 + any([0, 0, 1])"),
    "bool": _row("4 + bool('x')"),
    "callable": _row("5 + callable(helper)", module="def helper():\n    return 1"),
    "dict": _row("dict(a=3, b=5)['b']"),
    "dir": _row("3 + ('silu' in dir(torch.nn.functional))"),
    "enumerate": _row("list(enumerate([7, 8]))[1][0] + 2"),
    "filter": _row("len(list(filter(None, [0, 3, 0, 4]))) + 1"),
    "float": _row("int(float('2.5') * 2) + int(float(3) / 2)"),
    "frozenset": _row("len(frozenset([1, 1, 2])) + 3"),
    "getattr": _row("getattr(self, 'depth') + 1", init="self.depth = 3"),
    "hasattr": _row("2 + hasattr(self, 'depth') + hasattr(self, 'missing')", init="self.depth = 3"),
    "int": _row("int(7.9)"),
    "isinstance": _row("3 + isinstance(True, int) + isinstance(3, str)"),
    "issubclass": _row("3 + issubclass(Kid, Parent) + issubclass(Parent, (Kid,))",
                       module="class Parent(nn.Module):\n    pass\n\n\nclass Kid(Parent):\n    pass"),
    "iter": _row("next(iter([5, 6]))"),
    "len": _row("len((1, 2, 3)) + len(str(5)) + len(self.blocks) + len(Stages(3))",
                init="self.blocks = nn.ModuleList([nn.Identity()] * 2)",
                module="class Stages(collections.abc.Sequence):\n    def __init__(self, n):\n        self.n = n\n\n"
                       "    def __len__(self):\n        return self.n\n\n    def __getitem__(self, i):\n        return i"),
    "list": _row("list((4, 5))[1]"),
    # a lambda written in place, then a partial of a function over two zipped lists
    "map": _row("list(map(lambda v: v * 2, [1, 3]))[1] + list(map(functools.partial(add, 1), [2, 4], [3, 5]))[0]",
                module="def add(a, b, c):\n    return a + b + c"),
    "max": _row("max(3, 8)"),
    "min": _row("min([9, 4, 6])"),
    "next": _row("next(iter([]), 6)"),
    "range": _row("len(range(2, 11, 3))"),
    "reversed": _row("list(reversed([1, 2, 3]))[0] + 1"),
    # halves to even, an int without ndigits, a float with them
    "round": _row("round(2.5) + round(3.5) + int(round(2.675, 2) * 100) % 7"),
    "set": _row("len(kinds)", init="kinds = set([1, 2, 2, 3])\n        kinds.update([7, 8])\n        kinds.discard(1)"),
    "setattr": _row("self.width", init="setattr(self, 'width', 5)"),
    "slice": _row("6", forward="whole = slice(0, None)  # HF's slice(-logits_to_keep, None)\n        return self.proj(x[:, whole])"),
    "sorted": _row("sorted([5, 2, 9])[1]"),
    "str": _row("{'12': 3}[str(12)] + len(str(True))"),
    # a stochastic-depth rate decayed over the blocks (`sum(depths)`), and a float sum
    "sum": _row("sum((1, 2, 3)) + int(sum([0.5, 1.5], 1.0))"),
    "super": _row("super().width()", module="class Base(nn.Module):\n    def width(self):\n        return 6"),
    "tuple": _row("tuple([2, 7])[1]"),
    "type": _row("type(self).WIDTH + TABLE[type(Spec())]", module="class Spec:\n    pass\n\n\nTABLE = {Spec: 2}"),
    "zip": _row("list(zip([1, 2], [3, 4]))[1][1]"),
    "dict.fromkeys": _row("dict.fromkeys(['a', 'b'], 3)['b']"),
    "collections.OrderedDict": _row("collections.OrderedDict([('a', 2), ('b', 5)])['b']"),
    "copy.copy": _row("copy.copy([3, 4])[1] + moved.width + 10 * spec.width",
                      init="spec = Spec()\n        moved = copy.copy(spec)\n        setattr(moved, 'width', 3)",
                      module="class Spec:\n    def __init__(self):\n        self.width = 1"),
    "copy.deepcopy": _row("copy.deepcopy({'w': 6})['w'] + moved.width + 10 * spec.width",
                          init="spec = Spec()\n        moved = copy.deepcopy(spec)\n        moved.width = 2",
                          module="class Spec:\n    def __init__(self):\n        self.width = 1"),
    # a dataclass config with a field replaced: the others keep their (literal) defaults
    "dataclasses.replace": _row("spec.width + 2 * spec.depth",
                                init="spec = dataclasses.replace(Spec(width=3), depth=2)",
                                module="@dataclasses.dataclass\nclass Spec:\n    width: int = 1\n    depth: int = 4"),
    "functools.partial": _row("functools.partial(add, 2)(3)", module="def add(a, b):\n    return a + b"),
    "itertools.chain": _row("list(itertools.chain([1], [2, 6]))[2]"),
    # `to_ntuple(n)(x)`: a value made an n-tuple
    "itertools.repeat": _row("len(tuple(itertools.repeat(7, 3))) + tuple(itertools.repeat(2, 2))[1]"),
    # a block string split at its digits, a separator replaced, the digits found
    "re.split": _row("int(re.split(r'(\\d.*)', 'c24')[1]) // 4"),
    "re.sub": _row("int(re.sub('_', '', '1_2')) // 2"),
    "re.findall": _row("sum(int(d) for d in re.findall(r'\\d', 'k3s2e4'))"),
    **{f"math.{name}": _row(f"int(3 * math.{name}({arguments})) % 7 + 2") for name, arguments in _MATH_ARGUMENTS.items()},
}


def _source(module: str, init: str, width: str, forward: str) -> str:
    base = "Base" if "class Base" in module else "nn.Module"
    return textwrap.dedent('''\
        import collections
        import collections.abc
        import copy
        import dataclasses
        import functools
        import itertools
        import math
        import re

        import torch
        from torch import nn

        {module}


        class Model({base}):
            WIDTH = 5

            def __init__(self):
                super().__init__()
                {init}
                self.proj = nn.Linear({features}, {width})

            def forward(self, x):
                {forward}
        ''').format(module=module, base=base, init=init or "pass", width=width, forward=forward,
                    features=FEATURES)


def test_every_registry_entry_has_a_row():
    entries = {*builtin_registry.BUILTINS, *builtin_registry.TYPE_METHODS, *builtin_registry.STDLIB}
    assert entries == set(ROWS), f"missing rows: {sorted(entries - set(ROWS))}; rows of no entry: {sorted(set(ROWS) - entries)}"


@pytest.mark.parametrize("name", sorted(ROWS))
def test_the_builtin_decides_the_layer_as_python_does(tmp_path, capsys, name):
    path = tmp_path / "model.py"
    path.write_text(_source(*ROWS[name]))
    spec = importlib.util.spec_from_file_location(f"builtin_row_{abs(hash(name))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the test's own model, built by torch for the reference
    reference = counted_flops(module.Model(), torch.randn(BATCH, FEATURES), training=False)
    record = model_record(tmp_path, capsys, {"B": BATCH}, f"{path}:Model.forward", {"x": f"float32 B {FEATURES}"})
    assert record["complete"] is True, record["unresolved_sites"]
    assert record["totals"]["flops"] == reference
