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


def _long_method(lines: int) -> str:
    return ("import torch.nn as nn\n\n\nclass Deep(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.lin = nn.Linear(8, 8, bias=False)\n\n    def forward(self, x):\n        h = x\n"
            + "        h = self.lin(h)\n" * lines + "        return h\n")


def test_a_long_method_lets_go_of_its_stdlib_body_and_reads_it_again_alike(tmp_path):
    # once built, a method of RELEASE_LINES or more holds no stdlib body (a 100,000-line forward
    # held ~250 MB of it); a later reader (a class built whole, a decorator check) sees the same
    # statements at the same lines and columns
    import ast

    from tensorcost_lint.whole_model.source.lazy_definitions import RELEASE_LINES, ReleasedBody
    text = _long_method(RELEASE_LINES)
    (tmp_path / "deep.py").write_text(text)
    expected = ast.parse(text).body[1].body[1]  # Deep.forward, parsed whole
    definitions = _definitions(tmp_path / "deep.py")
    method = definitions.method("Deep", "forward")
    assert method is not None and method.name.value == "forward"
    statement = definitions.classes["Deep"].body[1]
    assert type(statement.body) is ReleasedBody and list.__len__(statement.body) == 0  # let go
    assert ast.dump(statement, include_attributes=True) == ast.dump(expected, include_attributes=True)
    whole = definitions["Deep"]  # the class built whole after its method: from the body read again
    assert [s.name.value for s in whole.body.body if hasattr(s, "name")] == ["__init__", "forward"]
    short = tmp_path / "short.py"
    short.write_text(_long_method(RELEASE_LINES - 20))
    kept = _definitions(short)
    kept.method("Deep", "forward")
    assert type(kept.classes["Deep"].body[1].body) is list  # shorter methods keep theirs


def test_a_long_method_the_front_end_cannot_build_falls_back_with_its_whole_body(tmp_path):
    # a long method's stdlib statements go as ast_front builds them; when a construct late in the
    # body stops the build (a `match`), the body is read again whole for the LibCST parse and for
    # any later reader, with nothing of it lost
    import ast

    from tensorcost_lint.whole_model.source.lazy_definitions import RELEASE_LINES, ReleasedBody
    text = _long_method(RELEASE_LINES).replace(
        "        return h\n", "        match h:\n            case _:\n                pass\n        return h\n")
    (tmp_path / "deep.py").write_text(text)
    expected = ast.parse(text).body[1].body[1]
    definitions = _definitions(tmp_path / "deep.py")
    method = definitions.method("Deep", "forward")
    assert method is not None and len(method.body.body) == RELEASE_LINES + 3  # h = x, the lines, match, return
    statement = definitions.classes["Deep"].body[1]
    assert type(statement.body) is ReleasedBody
    assert ast.dump(statement, include_attributes=True) == ast.dump(expected, include_attributes=True)


def _definitions(path):
    """The lazy definitions of `path` as a whole-model run reads them."""
    from tensorcost_lint.analysis.context import Recorder
    from tensorcost_lint.config.project_config import parse_config
    from tensorcost_lint.whole_model.source.source_tree import SourceTree

    config = parse_config({"dims": {"B": 2}}, str(path.parent / "tensorcost.yaml"), path.parent)
    return SourceTree(path.parent, config, {}, Recorder()).load(path).definitions
