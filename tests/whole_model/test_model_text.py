"""`tensorcost model`'s text for people: long expressions shown by their callee and location,
undecided conditions one per line most FLOPs at stake first, calls not followed one per line with
their count. The JSON keeps every expression whole."""

from __future__ import annotations

import json

from tensorcost_lint.cli.main import main
from tensorcost_lint.whole_model.report.report_text import short_expression

MODEL = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width, wide_flag, small_flag):
        super().__init__()
        self.small = nn.Linear(width, width)
        self.big = nn.Linear(width, 4 * width)
        self.back = nn.Linear(4 * width, width)
        self.wide_flag = wide_flag
        self.small_flag = small_flag

    def forward(self, x):
        if self.small_flag:
            x = self.small(x)
        if self.wide_flag:
            x = self.back(self.big(x))
        y = self.helper(
            x,  # the hidden states, as the blocks hand them on
            scale=1.0,  # a long call with comments inside, like the ones real models make
            mask=None,
            cache=None,
        )
        z = self.helper(x)
        w = self.helper(y)
        return self.other(z, w)
'''
DIMS = {"B": 2, "width": 8}


def _run(tmp_path, capsys, monkeypatch, *extra):
    (tmp_path / "net.py").write_text(MODEL)
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {json.dumps(DIMS)}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["model", "--entry", "net.py:Net.forward", "--input", "x=float32 B width", *extra]) == 0
    return capsys.readouterr().out


def test_undecided_conditions_one_per_line_most_flops_at_stake_first(tmp_path, capsys, monkeypatch):
    lines = _run(tmp_path, capsys, monkeypatch).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("undecided: "))
    assert lines[start] == "undecided: 2 (each side costed; `assume` decides one)"
    # wide: two linears of 2*B*width*4width = 1024 FLOPs each; small: 2*B*width*width = 256
    assert lines[start + 1:start + 3] == ["  self.wide_flag: 2048 FLOPs between its sides",
                                          "  self.small_flag: 256 FLOPs between its sides"]


def test_calls_not_followed_shown_by_callee_and_location_with_a_count(tmp_path, capsys, monkeypatch):
    out = _run(tmp_path, capsys, monkeypatch)
    lines = out.splitlines()
    start = lines.index("calls not followed (their cost is unknown): 4")
    followed = lines[start + 1:start + 3]
    # the three `self.helper` calls are one line (the first place, and how many), before `self.other`
    assert followed[0].startswith("  net.py:19:13: self.helper(…) ×3 (the first place shown): ")
    assert followed[1].startswith("  net.py:27:16: self.other(z, w): ")
    assert "# the hidden states" not in out and all(len(line) < 200 for line in lines)


def test_json_keeps_the_whole_expression(tmp_path, capsys, monkeypatch):
    record = json.loads(_run(tmp_path, capsys, monkeypatch, "--format", "json"))["models"][0]
    first = record["not_followed"][0]["expression"]
    assert first.startswith("self.helper(") and "# the hidden states" in first and "cache=None" in first


def test_short_expression_keeps_short_ones_and_cuts_long_calls_to_their_callee():
    assert short_expression("q @ k.transpose(-2, -1)") == "q @ k.transpose(-2, -1)"
    assert short_expression("self.attn(\n    x,  # comment\n)") == "self.attn(x)"
    long_call = "self.blocks[layer_index].attention(" + ", ".join(f"argument_{i}" for i in range(20)) + ")"
    assert short_expression(long_call) == "self.blocks[layer_index].attention(…)"
    assert len(short_expression("a + " * 40 + "b")) == 60
    assert short_expression("not python (") == "not python ("
    # the analysis flattens a multi-line call onto one line, so its comments swallow the rest
    flattened = "self.helper( x, # the hidden states, as the blocks hand them on scale=1.0, )"
    assert short_expression(flattened) == "self.helper(…)"
    assert short_expression("x + y # a comment") == "x + y"
