"""The experts fixture against FlopCounterMode: an undecided branch gives [min, max] with each end
equal to FlopCounterMode on one side; a ModuleList whose first pass makes the carried tensor need a
gradient costs its first iteration's backward apart from the rest."""

import json

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from tensorcost_lint.cli.main import main
from tests.whole_model.fixtures.experts.model import Experts

FIXTURE = "tests/whole_model/fixtures/experts/model.py"
DIMS = {"width": 8, "hidden": 16, "B": 4}


def _reference(monkeypatch, gate: str | None, training: bool) -> int:
    if gate is None:
        monkeypatch.delenv("EXPERTS_GATE", raising=False)
    else:
        monkeypatch.setenv("EXPERTS_GATE", gate)
    model = Experts(DIMS["width"], DIMS["hidden"])
    x = torch.zeros(DIMS["B"], DIMS["width"])
    with FlopCounterMode(display=False) as counter:
        if training:
            model(x).sum().backward()
        else:
            with torch.no_grad():
                model(x)
    return counter.get_total_flops()


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_undecided_branch_range_ends_equal_flop_counter_mode(tmp_path, capsys, monkeypatch, mode):
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {json.dumps(DIMS)}\n")
    monkeypatch.chdir(tmp_path)
    import tests.whole_model.fixtures.experts.model as module
    argv = ["model", "--entry", f"{module.__file__}:Experts.forward", "--input", "x=B width", "--mode", mode,
            "--format", "json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)["models"][0]
    training = mode == "training"
    low, high = _reference(monkeypatch, None, training), _reference(monkeypatch, "1", training)
    assert low < high
    assert result["totals"]["flops_range"] == [low, high]
    assert result["totals"]["flops"] == high
    assert result["undecided"] == ["self.gate"]  # `self.wide` is decided by its default: not listed
    assert result["unresolved_sites"] == 0
    modules = {site["module"] for site in result["sites"]}
    assert modules == {"experts.net.0", "experts.net.2", "", "big", "small"}


def test_text_tree_names_modules_executions_and_totals(tmp_path, capsys, monkeypatch):
    (tmp_path / "tensorcost.yaml").write_text(
        f"dims: {json.dumps(DIMS)}\nsource_roots: ['{(tmp_path.cwd() / FIXTURE).parent.as_posix()}']\n"
        "models:\n  experts:\n"
        f"    entry: {(tmp_path.cwd() / FIXTURE).as_posix()}:Experts.forward\n"
        "    inputs: {x: float32 B width}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["model", "experts"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("model experts (inference) ") and lines[0].endswith(" on h100-sxm")
    assert lines[1].split() == ["module", "class", "executions", "FLOPs", "retained_bytes"]
    table = [line.split() for line in lines[2:10]]
    # inference: the largest live set of contraction operands and outputs while each module runs
    # (B=4 float32: x and y 128 bytes, an expert's hidden 256, big's output 512)
    assert table == [
        ["(root)", "Experts", "1", "8704", "640"],
        ["big", "Linear", "1", "2048", "640"],
        ["experts", "ModuleList", "3", "6144", "384"],
        ["net", "Sequential", "3", "6144", "384"],
        ["0", "Linear", "3", "3072", "384"],
        ["1", "(shape-preserving)", "3", "0", "0"],
        ["2", "Linear", "3", "3072", "384"],
        ["small", "Linear", "1", "0", "256"],
    ]
    assert lines[10].startswith("totals (partial: 0 unresolved, 0 not followed): "
                                "flops=8704 forward_flops=8704 backward_flops=0 "
                                "flops_range=[7168, 8704] traffic_bytes=")
    assert lines[11:14] == ["undecided: 1 (each side costed; `assume` decides one)",
                            "  self.gate: 1536 FLOPs between its sides",  # 8704 - 7168
                            "unresolved sites: 0"]


def test_unknown_stays_unknown(tmp_path, capsys, monkeypatch):
    (tmp_path / "net.py").write_text(
        "import torch\nimport torch.nn as nn\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self, width):\n"
        "        super().__init__()\n"
        "        self.proj = nn.Linear(width, width)\n\n"
        "    def forward(self, x, extra=None):\n"
        "        y = self.proj(x)\n"
        "        z = torch.matmul(extra, y)\n"
        "        for _ in range(self.rounds()):\n"
        "            y = self.proj(y)\n"
        "        y = self.layers[0](y)\n"
        "        return self.helper(y)\n")
    monkeypatch.chdir(tmp_path)
    assert main(["model", "--entry", "net.py:Net.forward", "--input", "x=float32 B width", "--dim", "B=2",
                 "--dim", "width=4", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)["models"][0]
    assert result["totals"]["flops"] == 2 * 2 * 4 * 4  # only the one site that is known
    rows = [(s["line"], s["expression"], s["executions"], s["flops"], s["resolved"], s["reason"])
            for s in result["sites"]]
    assert rows == [
        (11, "self.proj(x)", 1, 64, True, None),
        (12, "torch.matmul(extra, y)", 1, None, False,
         "operand 0 has no known shape (annotate it or add a shape comment)"),
        (14, "self.proj(y)", None, None, False, "loop trip count is not known statically"),
    ]
    assert result["unresolved_sites"] == 2
    assert result["sites"][0]["path"] == "net.py" and result["sites"][0]["column"] == 13
    unknown = "the callee is not known statically (defined outside the analysed tree, or chosen at run time)"
    assert result["not_followed"] == [
        {"path": "net.py", "line": 13, "column": 24, "expression": "self.rounds()", "reason": unknown},
        {"path": "net.py", "line": 15, "column": 13, "expression": "self.layers[0](y)",
         "reason": "the callee is picked by a subscript whose value is not known"},
        {"path": "net.py", "line": 16, "column": 16, "expression": "self.helper(y)", "reason": unknown},
    ]


PAIRS = '''import torch.nn as nn


class Attn(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        qkv = self.qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: t.reshape(b, n, self.heads, d // self.heads).transpose(1, 2), qkv)
        w = (q @ k.transpose(-1, -2)).softmax(dim=-1)
        return self.out((w @ v).transpose(1, 2).reshape(b, n, d))


class Net(nn.Module):
    def __init__(self, dim, depth, heads=2):
        super().__init__()
        self.layers = nn.ModuleList([nn.ModuleList([Attn(dim, heads), nn.Linear(dim, dim)]) for _ in range(depth)])

    def forward(self, x):
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return x
'''


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_map_lambda_and_module_pairs_equal_flop_counter_mode(tmp_path, capsys, monkeypatch, mode):
    """vit-pytorch idioms: `map(lambda t: ..., qkv)` and `for attn, ff in self.layers`."""
    import importlib.util

    (tmp_path / "pairs_net.py").write_text(PAIRS)
    spec = importlib.util.spec_from_file_location("pairs_net", tmp_path / "pairs_net.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the reference run only: tensorcost reads the file statically
    model, x = module.Net(8, 3), torch.zeros(2, 6, 8)
    with FlopCounterMode(display=False) as counter:
        if mode == "training":
            model(x).sum().backward()
        else:
            with torch.no_grad():
                model(x)
    monkeypatch.chdir(tmp_path)
    assert main(["model", "--entry", "pairs_net.py:Net.forward", "--input", "x=B N dim", "--dim", "B=2", "--dim", "N=6",
                 "--dim", "dim=8", "--dim", "depth=3", "--mode", mode, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)["models"][0]
    assert result["totals"]["flops"] == counter.get_total_flops()
    assert result["unresolved_sites"] == 0 and result["not_followed"] == []
