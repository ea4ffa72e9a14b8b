"""Generated hostile model programs (issue 22), shared by the tests and benchmarks/hostile_models.py.
Each takes its size and has `flops(size, matmul)`: the exact count it must give when the run
follows it whole (an independent count: the program's own arithmetic, not the analysis)."""

from __future__ import annotations

_HEAD = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n\n\n"
_MODULE = ("class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
           "        self.w = nn.Parameter(torch.empty(64, 64))\n\n    def forward(self, x):\n        return {body}\n")


def _flops(formula):
    def mark(program):
        program.flops = formula
        return program
    return mark


@_flops(lambda n, matmul: matmul * 2**n)
def call_tree(levels: int) -> str:
    """`h_i(x, w) = h_{i+1}(x, w) + h_{i+1}(x, w)`, `h_levels` a matmul: 2**levels matmuls."""
    lines = [f"def h{i}(x, w):\n    return h{i + 1}(x, w) + h{i + 1}(x, w)\n\n" for i in range(levels)]
    lines.append(f"def h{levels}(x, w):\n    return x @ w\n\n\n")
    return _HEAD + "".join(lines) + _MODULE.format(body="h0(x, self.w)")


@_flops(lambda n, matmul: matmul * 2**n)
def shapes_per_level(levels: int) -> str:
    """Each level pads the input (a new tensor, equal in shape) before both calls."""
    lines = [f"def h{i}(x, w):\n    return h{i + 1}(x + 1, w) + h{i + 1}(x * 2, w)\n\n" for i in range(levels)]
    lines.append(f"def h{levels}(x, w):\n    return x @ w\n\n\n")
    return _HEAD + "".join(lines) + _MODULE.format(body="h0(x, self.w)")


@_flops(lambda n, matmul: matmul * 2**n)
def undecided_per_level(levels: int) -> str:
    """An undecided branch per level: one side calls the next level once, the other twice."""
    lines = [f"def h{i}(x, w, flag):\n    if flag.any():\n        y = h{i + 1}(x, w, flag)\n    else:\n"
             f"        y = h{i + 1}(x, w, flag) + h{i + 1}(x, w, flag)\n    return y\n\n" for i in range(levels)]
    lines.append(f"def h{levels}(x, w, flag):\n    return x @ w\n\n\n")
    return _HEAD + "".join(lines) + _MODULE.format(body="h0(x, self.w, x > 0)")


@_flops(lambda n, matmul: matmul * 2**n)
def module_tree(levels: int) -> str:
    """Level i holds two modules of level i+1 and runs both: 2**levels leaf modules."""
    classes = [f"class L{levels}(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               "        self.w = nn.Parameter(torch.empty(64, 64))\n\n    def forward(self, x):\n"
               "        return x @ self.w\n\n\n"]
    for i in reversed(range(levels)):
        classes.append(f"class L{i}(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                       f"        self.a = L{i + 1}()\n        self.b = L{i + 1}()\n\n    def forward(self, x):\n"
                       "        return self.a(x) + self.b(x)\n\n\n")
    entry = ("class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.root = L0()\n\n"
             "    def forward(self, x):\n        return self.root(x)\n")
    return _HEAD + "".join(classes) + entry


@_flops(lambda n, matmul: matmul * n)
def long_forward(statements: int) -> str:
    """A forward of `statements` lines `h = self.lin(h)` (the class on line 5, the first of them on line 12)."""
    return (_HEAD.replace("import torch.nn.functional as F\n", "") +
            "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.lin = nn.Linear(64, 64, bias=False)\n\n    def forward(self, x):\n        h = x\n"
            + "        h = self.lin(h)\n" * statements + "        return h\n")


@_flops(lambda n, matmul: matmul * n)
def named_forward(statements: int) -> str:
    """`long_forward` with a new name per statement (`h1 = self.lin(h0)`, as generated code such as
    torch.fx's names every value): the function holds `statements + 1` names at its end."""
    return (_HEAD.replace("import torch.nn.functional as F\n", "") +
            "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.lin = nn.Linear(64, 64, bias=False)\n\n    def forward(self, x):\n        h0 = x\n"
            + "".join(f"        h{i + 1} = self.lin(h{i})\n" for i in range(statements))
            + f"        return h{statements}\n")
