"""The runs of one process share parsed definitions (lazy_definitions.parse_piece): a second run of the
same entry gives the same report, equal methods of two classes keep their own positions, and an
edited file is read again."""

import json

from tensorcost_lint.cli.main import main

SOURCE = '''import torch.nn as nn


class Up(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, 2 * d)

    def forward(self, x):
        return self.proj(x)


class Down(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(2 * d, d)

    def forward(self, x):
        return self.proj(x)


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up = Up(d)
        self.down = Down(d)

    def forward(self, x):
        return self.down(self.up(x))
'''


def _sites(tmp_path, capsys) -> list:
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--format", "json"]
    assert main(argv) == 0
    return [[(s["line"], s["column"], s["module"], s["flops"]) for s in m["sites"]]
            for m in json.loads(capsys.readouterr().out)["models"]]


def test_equal_methods_keep_their_own_lines_across_runs(tmp_path, capsys):
    (tmp_path / "net.py").write_text(SOURCE)
    (tmp_path / "tensorcost.yaml").write_text(
        "dims: {d: 8, B: 2}\nmodels:\n"
        "  a: {entry: 'net.py:Net.forward', inputs: {x: float32 B d}}\n"
        "  b: {entry: 'net.py:Net.forward', inputs: {x: float32 B d}, mode: training}\n")
    first = _sites(tmp_path, capsys)
    up, down = (10, 16, "up.proj", 2 * 2 * 8 * 16), (19, 16, "down.proj", 2 * 2 * 16 * 8)
    assert first[0] == [up, down]
    assert [row[:3] for row in first[1]] == [up[:3], down[:3]]  # the training run, same definitions
    assert _sites(tmp_path, capsys) == first  # a later run in this process: the same report
    (tmp_path / "net.py").write_text("# edited\n" + SOURCE.replace("2 * d", "3 * d"))
    edited = _sites(tmp_path, capsys)
    assert edited[0] == [(11, 16, "up.proj", 2 * 2 * 8 * 24), (20, 16, "down.proj", 2 * 2 * 24 * 8)]
