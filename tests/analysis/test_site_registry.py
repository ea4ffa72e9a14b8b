"""One row per call-site registry entry: the prefilter lets the file through, unit selection picks the
function, and the recorded site resolves to FLOPs counted independently (torch's FlopCounterMode on
meta tensors, nothing allocated, or opt_einsum's path cost). A meta-test fails when an entry has no
row, so a call cannot be added to the registry without proving it end to end."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from tensorcost_lint.analysis.site_registry import SITES, readme_list
from tensorcost_lint.analysis.units import select_units
from tensorcost_lint.driver.engine import may_have_findings
from tests.lint.helpers import lint

torch = pytest.importorskip("torch")
opt_einsum = pytest.importorskip("opt_einsum")

DIMS = {"b": 2, "s": 3, "d": 4, "f": 5, "n": 6}
TORCH = "import torch\nimport torch.nn.functional as F\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n\n"
NUMPY = "import numpy as np\nfrom jaxtyping import Float\n\n\n"
JAX = "import jax\nimport jax.numpy as jnp\nfrom jax import lax\nfrom jaxtyping import Array, Float\n\n\n"


@dataclass(frozen=True)
class Row:
    source: str  # the call on the last line of the file
    flops: Callable[[], int]  # the independent count


def _meta(*shape):
    return torch.empty(shape, device="meta")


def counted(call) -> Callable[[], int]:
    def count() -> int:
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False) as counter:
            call()
        return counter.get_total_flops()

    return count


def einsum_cost(subscripts: str, *shapes) -> Callable[[], int]:
    return lambda: opt_einsum.contract_path(subscripts, *shapes, shapes=True)[1].opt_cost


def torch_fn(params: str, body: str) -> str:
    return TORCH + f"def f({params}):\n    return {body}\n"


X = 'x: Float[Tensor, "b s d"]'
W = 'w: Float[Tensor, "d f"]'
ROWS = {
    "@": Row(torch_fn(f"{X}, {W}", "x @ w"), counted(lambda: _meta(2, 3, 4) @ _meta(4, 5))),
    "torch.matmul": Row(torch_fn(f"{X}, {W}", "torch.matmul(x, w)"),
                        counted(lambda: torch.matmul(_meta(2, 3, 4), _meta(4, 5)))),
    "torch.mm": Row(torch_fn('a: Float[Tensor, "s d"], w: Float[Tensor, "d f"]', "torch.mm(a, w)"),
                    counted(lambda: torch.mm(_meta(3, 4), _meta(4, 5)))),
    "torch.bmm": Row(torch_fn(f'{X}, v: Float[Tensor, "b d f"]', "torch.bmm(x, v)"),
                     counted(lambda: torch.bmm(_meta(2, 3, 4), _meta(2, 4, 5)))),
    "torch.baddbmm": Row(torch_fn(f'c: Float[Tensor, "b s f"], {X}, v: Float[Tensor, "b d f"]', "torch.baddbmm(c, x, v)"),
                         counted(lambda: torch.baddbmm(_meta(2, 3, 5), _meta(2, 3, 4), _meta(2, 4, 5)))),
    "torch.addmm": Row(torch_fn(f'c: Float[Tensor, "s f"], a: Float[Tensor, "s d"], {W}', "torch.addmm(c, a, w)"),
                       counted(lambda: torch.addmm(_meta(3, 5), _meta(3, 4), _meta(4, 5)))),
    "torch.addbmm": Row(torch_fn(f'c: Float[Tensor, "s f"], {X}, v: Float[Tensor, "b d f"]', "torch.addbmm(c, x, v)"),
                        einsum_cost("bsd,bdf->sf", (2, 3, 4), (2, 4, 5))),  # FlopCounterMode does not count addbmm
    "torch.nn.functional.linear": Row(torch_fn(f'{X}, w: Float[Tensor, "f d"]', "F.linear(x, w)"),
                                      counted(lambda: torch.nn.functional.linear(_meta(2, 3, 4), _meta(5, 4)))),
    # FlopCounterMode counts no `_grouped_mm`: each of the s rows meets one group's [d, f] matrix
    "torch.nn.functional.grouped_mm": Row(
        torch_fn('a: Float[Tensor, "s d"], v: Float[Tensor, "b d f"], offs: Float[Tensor, "b"]',
                 "F.grouped_mm(a, v, offs=offs)"), einsum_cost("sd,df->sf", (3, 4), (4, 5))),
    "torch._grouped_mm": Row(
        torch_fn('a: Float[Tensor, "b s d"], v: Float[Tensor, "b d f"]', "torch._grouped_mm(a, v)"),
        einsum_cost("bsd,bdf->bsf", (2, 3, 4), (2, 4, 5))),
    "x.matmul": Row(torch_fn(f"{X}, {W}", "x.matmul(w)"), counted(lambda: _meta(2, 3, 4).matmul(_meta(4, 5)))),
    "x.baddbmm": Row(torch_fn(f'c: Float[Tensor, "b s f"], {X}, v: Float[Tensor, "b d f"]',
                              "c.baddbmm(batch1=x, batch2=v, beta=0.5)"),
                     counted(lambda: _meta(2, 3, 5).baddbmm(_meta(2, 3, 4), _meta(2, 4, 5)))),
    "x.addmm": Row(torch_fn(f'c: Float[Tensor, "f"], a: Float[Tensor, "s d"], {W}', "c.addmm(a, w)"),
                   counted(lambda: _meta(5).addmm(_meta(3, 4), _meta(4, 5)))),
    "x.mm": Row(torch_fn(f'a: Float[Tensor, "s d"], {W}', "a.mm(w)"), counted(lambda: _meta(3, 4).mm(_meta(4, 5)))),
    "x.bmm": Row(torch_fn(f'{X}, v: Float[Tensor, "b d f"]', "x.bmm(v)"),
                 counted(lambda: _meta(2, 3, 4).bmm(_meta(2, 4, 5)))),
    "x.dot": Row(torch_fn('u: Float[Tensor, "d"], v: Float[Tensor, "d"]', "u.dot(v)"), einsum_cost("i,i->", (4,), (4,))),
    "x.__matmul__": Row(torch_fn(f"{X}, {W}", "x.__matmul__(w)"), counted(lambda: _meta(2, 3, 4) @ _meta(4, 5))),
    "torch.nn.Linear": Row(
        TORCH + "class Proj(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = torch.nn.Linear(4, 5)\n\n"
        f"    def forward(self, {X}):\n        return self.proj(x)\n",
        counted(lambda: torch.nn.functional.linear(_meta(2, 3, 4), _meta(5, 4)))),
    "torch.nn.LazyLinear": Row(
        TORCH + "class Proj(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = torch.nn.LazyLinear(5)\n\n"
        f"    def forward(self, {X}):\n        return self.proj(x)\n",
        counted(lambda: torch.nn.functional.linear(_meta(2, 3, 4), _meta(5, 4)))),
    "torch.nn.Conv1d": Row(
        TORCH + "class Mix(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = torch.nn.Conv1d(4, 5, 3, padding=1)\n\n"
        '    def forward(self, x: Float[Tensor, "b d n"]):\n        return self.conv(x)\n',
        counted(lambda: torch.nn.functional.conv1d(_meta(2, 4, 6), _meta(5, 4, 3), padding=1))),
    "torch.nn.Conv2d": Row(
        TORCH + "class Patchify(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = torch.nn.Conv2d(3, 5, kernel_size=2, stride=2)\n\n"
        '    def forward(self, x: Float[Tensor, "b 3 d n"]):\n        return self.proj(x)\n',
        counted(lambda: torch.nn.functional.conv2d(_meta(2, 3, 4, 6), _meta(5, 3, 2, 2), stride=2))),
    "torch.nn.Conv3d": Row(
        TORCH + "class Video(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = torch.nn.Conv3d(3, 4, (1, 2, 3), stride=(1, 2, 1), dilation=(2, 1, 1))\n\n"
        '    def forward(self, x: Float[Tensor, "b 3 s d n"]):\n        return self.conv(x)\n',
        counted(lambda: torch.nn.functional.conv3d(_meta(2, 3, 3, 4, 6), _meta(4, 3, 1, 2, 3), stride=(1, 2, 1),
                                                   dilation=(2, 1, 1)))),
    "torch.nn.functional.conv1d": Row(
        torch_fn('x: Float[Tensor, "b d n"], w: Float[Tensor, "n 2 3"]', "F.conv1d(x, w, None, 1, 1, 1, 2)"),
        counted(lambda: torch.nn.functional.conv1d(_meta(2, 4, 6), _meta(6, 2, 3), padding=1, groups=2))),
    "torch.nn.functional.conv2d": Row(
        torch_fn('x: Float[Tensor, "b 3 d n"], w: Float[Tensor, "f 3 2 2"]', "F.conv2d(x, w, stride=2)"),
        counted(lambda: torch.nn.functional.conv2d(_meta(2, 3, 4, 6), _meta(5, 3, 2, 2), stride=2))),
    "torch.nn.functional.conv3d": Row(
        torch_fn('x: Float[Tensor, "b 3 s d n"], w: Float[Tensor, "d 3 1 2 3"]',
                 "F.conv3d(x, weight=w, stride=(1, 2, 1), dilation=(2, 1, 1))"),
        counted(lambda: torch.nn.functional.conv3d(_meta(2, 3, 3, 4, 6), _meta(4, 3, 1, 2, 3), stride=(1, 2, 1),
                                                   dilation=(2, 1, 1)))),
    "numpy.matmul": Row(NUMPY + "def f():\n    a = np.zeros((3, 4))\n    return np.matmul(a, np.zeros((4, 5)))\n",
                        einsum_cost("ij,jk->ik", (3, 4), (4, 5))),
    "numpy.dot": Row(NUMPY + "def f():\n    a = np.zeros((2, 3, 4))\n    return np.dot(a, np.zeros((6, 4, 5)))\n",
                     einsum_cost("abc,dce->abde", (2, 3, 4), (6, 4, 5))),
    "jax.numpy.matmul": Row(JAX + 'def f(x: Float[Array, "b s d"], w: Float[Array, "d f"]):\n    return jnp.matmul(x, w)\n',
                            einsum_cost("bsd,df->bsf", (2, 3, 4), (4, 5))),
    "jax.numpy.dot": Row(JAX + 'def f(x: Float[Array, "s d"], w: Float[Array, "d f"]):\n    return jnp.dot(x, w)\n',
                         einsum_cost("sd,df->sf", (3, 4), (4, 5))),
    "jax.lax.dot_general": Row(
        JAX + 'def f(x: Float[Array, "b s d"], w: Float[Array, "b d f"]):\n'
        "    return lax.dot_general(x, w, (((2,), (1,)), ((0,), (0,))))\n",
        einsum_cost("bsd,bdf->bsf", (2, 3, 4), (2, 4, 5))),
    "torch.einsum": Row(torch_fn(f"{X}, {W}", 'torch.einsum("bsd,df->bsf", x, w)'),
                        counted(lambda: torch.einsum("bsd,df->bsf", _meta(2, 3, 4), _meta(4, 5)))),
    "numpy.einsum": Row(NUMPY + 'def f():\n    a = np.zeros((3, 4))\n    return np.einsum("sd,df->sf", a, np.zeros((4, 5)))\n',
                        einsum_cost("sd,df->sf", (3, 4), (4, 5))),
    "jax.numpy.einsum": Row(JAX + 'def f(x: Float[Array, "b s d"], w: Float[Array, "d f"]):\n'
                            '    return jnp.einsum("bsd,df->bsf", x, w)\n', einsum_cost("bsd,df->bsf", (2, 3, 4), (4, 5))),
    "opt_einsum.contract": Row(TORCH.replace("import torch\n", "import opt_einsum\n", 1)
                               + f'def f({X}, {W}):\n    return opt_einsum.contract("bsd,df->bsf", x, w)\n',
                               einsum_cost("bsd,df->bsf", (2, 3, 4), (4, 5))),
    "einops.einsum": Row(TORCH.replace("import torch\n", "import einops\n", 1)
                         + f'def f({X}, {W}):\n    return einops.einsum(x, w, "b s d, d f -> b s f")\n',
                         einsum_cost("bsd,df->bsf", (2, 3, 4), (4, 5))),
    "torch.nn.functional.scaled_dot_product_attention": Row(
        torch_fn('q: Float[Tensor, "b n s d"], k: Float[Tensor, "b n s d"], v: Float[Tensor, "b n s f"]',
                 "F.scaled_dot_product_attention(q, k, v)"),
        counted(lambda: torch.nn.functional.scaled_dot_product_attention(
            _meta(2, 6, 3, 4), _meta(2, 6, 3, 4), _meta(2, 6, 3, 5)))),
    "jax.nn.dot_product_attention": Row(
        JAX + 'def f(q: Float[Array, "b s n d"], k: Float[Array, "b s n d"], v: Float[Array, "b s n f"]):\n'
        "    return jax.nn.dot_product_attention(q, k, v)\n",
        counted(lambda: torch.nn.functional.scaled_dot_product_attention(
            _meta(2, 6, 3, 4), _meta(2, 6, 3, 4), _meta(2, 6, 3, 5)))),
}


def test_every_registry_entry_has_a_row():
    assert sorted(ROWS) == sorted(spec.name for spec in SITES)


@pytest.mark.parametrize("spec", SITES, ids=[spec.name for spec in SITES])
def test_registry_entry_is_found_and_costed(spec):
    row = ROWS[spec.name]
    source = textwrap.dedent(row.source)
    assert may_have_findings(source)
    lines = source.splitlines()
    call_line = len(lines)
    selection = select_units(ast.parse(source), lines, einops="einops" in source)
    assert any(unit.start <= call_line <= unit.end for unit in selection.units) or selection.whole_file
    result = lint(source, {"dims": DIMS})
    sites = [s for s in result.sites if s.site.spec is spec]
    assert len(sites) == 1, [(s.site.function, s.site.line) for s in result.sites]
    site, cost = sites[0].site, sites[0].cost
    assert (site.line, site.operation) == (call_line, spec.operation)
    assert cost.resolved, cost.reason
    assert cost.flops == row.flops() > 0


def test_docs_list_the_registry():
    readme = (Path(__file__).resolve().parents[2] / "docs" / "shapes.md").read_text()
    block = readme.split("<!-- site-list", 1)[1].split("-->", 1)[1].split("  <!-- end site-list -->", 1)[0]
    assert block.lstrip("\n") == readme_list()
