"""Generated whole models (issue 22): random call trees over several files (imported as functions,
as modules or through star imports), loops of known trip counts and decided branches. Every run
ends cleanly, and a total that calls itself complete equals the program's own count (computed here
from the generated structure, not by the analysis); one that does not match must say it is partial."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.run_cli import run_tensorcost

MATMUL = 2 * 2 * 64 * 64
FUNCTIONS = 7


@st.composite
def bodies(draw, index: int, depth: int = 0):
    """Items of function `index`: ("mm",), ("call", j) with j > index, ("loop", k, items), ("if", _, a, b)
    (`if flag:` on the function's own flag)."""
    items = []
    for _ in range(draw(st.integers(1, 3))):
        kinds = ["mm"] + (["call"] * 2 if index < FUNCTIONS - 1 else []) + (["loop", "if"] if depth < 2 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "mm":
            items.append(("mm",))
        elif kind == "call":
            items.append(("call", draw(st.integers(index + 1, FUNCTIONS - 1))))
        elif kind == "loop":
            items.append(("loop", draw(st.integers(1, 4)), draw(bodies(index, depth + 1))))
        else:
            items.append(("if", draw(st.booleans()), draw(bodies(index, depth + 1)), draw(bodies(index, depth + 1))))
    return items


def count(items, functions, flag: bool) -> int:
    """FLOPs of `items` run in a function whose `flag` is `flag` (the branches test it)."""
    total = 0
    for item in items:
        if item[0] == "mm":
            total += MATMUL
        elif item[0] == "call":
            callee_items, callee_flag, _ = functions[item[1]]
            total += count(callee_items, functions, callee_flag)
        elif item[0] == "loop":
            total += item[1] * count(item[2], functions, flag)
        else:
            total += count(item[2] if flag else item[3], functions, flag)
    return total


def _code(items, indent: str, calls) -> list[str]:
    lines = []
    for item in items:
        if item[0] == "mm":
            lines.append(f"{indent}y = y + x @ w")
        elif item[0] == "call":
            lines.append(f"{indent}y = y + {calls[item[1]]}(x, w)")
        elif item[0] == "loop":
            lines += [f"{indent}for _ in range({item[1]}):", *_code(item[2], indent + "    ", calls)]
        else:
            lines += [f"{indent}if flag:", *_code(item[2], indent + "    ", calls), f"{indent}else:",
                      *_code(item[3], indent + "    ", calls)]
    return lines


@st.composite
def models(draw):
    """(files, expected FLOPs): functions f0..f6, each in the entry file or a helper module, reached
    the way the generator picks (`from .m import f`, `from . import m; m.f`, `from .m import *`)."""
    functions = [(draw(bodies(i)), draw(st.booleans()), draw(st.sampled_from(["local", "name", "module", "star"])))
                 for i in range(FUNCTIONS)]
    files: dict[str, list[str]] = {"model.py": ["import torch", "from torch import nn"]}
    imports: dict[str, list[str]] = {"model.py": []}
    homes = ["model.py" if how == "local" else f"h{i}.py" for i, (_, _, how) in enumerate(functions)]
    for i, (items, flag, how) in enumerate(functions):
        home = homes[i]
        files.setdefault(home, ["import torch"])
        imports.setdefault(home, [])
        calls = {}
        for j in range(i + 1, FUNCTIONS):
            module = homes[j][:-3]
            if homes[j] == home:
                calls[j] = f"f{j}"
            elif functions[j][2] == "module":
                imports[home].append(f"from . import {module}")
                calls[j] = f"{module}.f{j}"
            elif functions[j][2] == "star":
                imports[home].append(f"from .{module} import *")
                calls[j] = f"f{j}"
            else:
                imports[home].append(f"from .{module} import f{j}")
                calls[j] = f"f{j}"
        files[home] += ["", "", f"def f{i}(x, w, flag={flag}):", "    y = x @ w - x @ w",
                        *_code(items, "    ", calls), "    return y"]
    files["model.py"] += ["", "", "class M(nn.Module):", "    def __init__(self):", "        super().__init__()",
                          "        self.w = nn.Parameter(torch.empty(64, 64))", "", "    def forward(self, x):",
                          "        return f0(x, self.w)"]
    if homes[0] != "model.py":
        imports["model.py"].append("from .h0 import f0")
    text = {name: "\n".join(lines[:1] + sorted(set(imports[name])) + lines[1:]) + "\n" for name, lines in files.items()}
    # `y = x @ w - x @ w` opens each function: two matmuls per call of it
    expected = count([("call", 0)], [(items + [("mm",), ("mm",)], flag, how) for items, flag, how in functions], False)
    return text, expected


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(models())
def test_generated_models_are_complete_and_right_or_say_they_are_partial(model):
    files, expected = model
    directory = Path(tempfile.mkdtemp())
    try:
        (directory / ".git").mkdir()
        package = directory / "pkg"
        package.mkdir()
        (package / "__init__.py").write_text("")
        for name, text in files.items():
            (package / name).write_text(text)
        (directory / "tensorcost.yaml").write_text("dims: {B: 2}\n")
        ran = run_tensorcost("model", "--entry", "pkg/model.py:M.forward", "--input", "x=float32 B 64",
                             "--format", "json", cwd=directory)
        assert ran.returncode == 0, ran.stderr
        result = json.loads(ran.stdout)["models"][0]
        complete = result["unresolved_sites"] == 0 and not result["not_followed"] and not result["undecided"]
        if complete:  # a complete total is the program's own count, exactly
            assert result["totals"]["flops"] == expected, (result["totals"], result["not_followed"], files)
        else:
            assert result["totals"]["flops"] <= expected
    finally:
        shutil.rmtree(directory)
