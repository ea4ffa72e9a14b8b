"""What each op saves for its backward (the saved rules of analysis/op_table.py, as
whole_model/memory/saved_table.py reads them), one row per entry, held against torch's autograd on
the same op: each row is a small module (a linear layer, so the op's input needs a gradient, then the
op), `activations` of a `tensorcost model` training run against the bytes of every storage the
step's `grad_fn` graph saves (memory_runs.saved_activation_bytes). An entry with a saved rule and no
row fails `test_every_table_entry_has_a_row`: adding an op is one entry plus its row here."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest

torch = pytest.importorskip("torch")
from tensorcost_lint.cli.main import main  # noqa: E402
from tensorcost_lint.whole_model.memory.saved_table import FUNCTIONS, METHODS, MODULES  # noqa: E402
from tests.whole_model.memory_runs import saved_activation_bytes  # noqa: E402

pytestmark = pytest.mark.xdist_group("saved_table")  # one module file and three tensorcost runs for all rows

DIMS = {"B": 2, "T": 3, "d": 4, "k": 2}
MODULE_KEYS = {"GELU": "nn.GELU()", "SiLU": "nn.SiLU()", "Mish": "nn.Mish()", "ELU": "nn.ELU()",
               "LeakyReLU": "nn.LeakyReLU(0.1)", "ReLU6": "nn.ReLU6()", "Hardtanh": "nn.Hardtanh()",
               "ReLU": "nn.ReLU()", "Tanh": "nn.Tanh()", "Sigmoid": "nn.Sigmoid()",
               "Softmax": "nn.Softmax(dim=-1)", "LogSoftmax": "nn.LogSoftmax(dim=-1)", "Identity": "nn.Identity()",
               "RMSNorm": "nn.RMSNorm(d)", "RMSNorm no weight": "nn.RMSNorm(d, elementwise_affine=False)"}
# transformers' class, run through the gelu row (tests/whole_model/test_memory_hf.py holds it on BERT)
NOT_TORCH = {"GELUActivation"}

UNARY = ("abs", "acos", "asin", "atan", "cos", "cosh", "erf", "exp", "exp2", "expm1", "frac", "log", "log1p",
         "reciprocal", "relu", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "square", "tanh")
# (the table key it tests, the expression: `h` needs a gradient, `x` does not; `mask` bool and `idx`
# int64 like them)
ROWS = [
    *[(f"torch.{name}", f"torch.{name}(h)") for name in UNARY],
    *[(name, f"h.{name}()") for name in UNARY],
    ("torch.clamp", "torch.clamp(h, min=-0.5)"), ("clamp", "h.clamp(-0.5, 0.5)"),
    ("torch.clamp_min", "torch.clamp_min(h, 0.0)"), ("clamp_min", "h.clamp_min(0.0)"),
    ("torch.clamp_max", "torch.clamp_max(h, 0.5)"), ("clamp_max", "h.clamp_max(0.5)"),
    ("torch.clip", "torch.clip(h, -0.5, 0.5)"), ("clip", "h.clip(-0.5, 0.5)"),
    ("torch.var", "torch.var(h, -1)"), ("var", "h.var(-1)"), ("torch.std", "torch.std(h, -1)"), ("std", "h.std(-1)"),
    ("torch.pow", "torch.pow(h, 3)"), ("pow", "h.pow(2)"),
    ("torch.softmax", "torch.softmax(h, -1)"), ("softmax", "h.softmax(-1)"),
    ("torch.log_softmax", "torch.log_softmax(h, -1)"), ("log_softmax", "h.log_softmax(dim=-1)"),
    ("torch.logsumexp", "torch.logsumexp(h, -1)"), ("logsumexp", "h.logsumexp(-1)"),
    ("torch.linalg.vector_norm", "torch.linalg.vector_norm(h, dim=-1)"), ("torch.norm", "torch.norm(h, dim=-1)"),
    ("norm", "h.norm(dim=-1)"), ("torch.amax", "torch.amax(h, -1)"), ("amax", "h.amax(-1)"),
    ("torch.amin", "torch.amin(h, -1)"), ("amin", "h.amin(-1)"),
    ("torch.max", "torch.max(h)"), ("torch.max", "torch.max(h, -1)[0]"), ("torch.max", "torch.max(h, x)"),
    ("max", "h.max()"), ("max", "h.max(dim=-1).values"), ("torch.min", "torch.min(h)"), ("min", "h.min(-1)[0]"),
    ("torch.masked_fill", "torch.masked_fill(h, mask, 0.0)"), ("masked_fill", "h.masked_fill(mask, 0.0)"),
    ("masked_fill_", "h.clone().masked_fill_(mask, 0.0)"), ("torch.where", "torch.where(mask, h, x)"),
    ("torch.gather", "torch.gather(h, -1, idx)"), ("gather", "h.gather(-1, idx)"),
    ("torch.index_select", "torch.index_select(h, -1, idx[0, 0])"), ("index_select", "h.index_select(2, idx[1, 2])"),
    ("torch.topk", "torch.topk(h, 2)[0]"), ("topk", "h.topk(2, dim=-1).values"),
    ("torch.sort", "torch.sort(h, -1)[0]"), ("sort", "h.sort(dim=-1)[0]"),
    ("view", "h.view(-1, h.shape[-1])"), ("reshape", "h.reshape(-1)"), ("torch.reshape", "torch.reshape(h, (-1,))"),
    ("transpose", "h.transpose(0, 1)"), ("torch.transpose", "torch.transpose(h, 0, 1)"),
    ("permute", "h.permute(2, 0, 1)"), ("torch.permute", "torch.permute(h, (2, 0, 1))"),
    ("contiguous", "h.transpose(0, 1).contiguous()"), ("unsqueeze", "h.unsqueeze(0)"),
    ("torch.unsqueeze", "torch.unsqueeze(h, 1)"), ("squeeze", "h.unsqueeze(0).squeeze(0)"),
    ("torch.squeeze", "torch.squeeze(h.unsqueeze(0), 0)"), ("expand", "h[:, :1].expand(h.shape)"),
    ("expand_as", "h[:, :1].expand_as(x)"), ("flatten", "h.flatten(1)"), ("torch.flatten", "torch.flatten(h)"),
    ("split", "h.split(2, dim=-1)[0]"), ("torch.split", "torch.split(h, 2, -1)[1]"),
    ("chunk", "h.chunk(2, -1)[1]"), ("torch.chunk", "torch.chunk(h, 2, dim=-1)[0]"),
    ("unbind", "h.unbind(1)[0]"), ("torch.unbind", "torch.unbind(h, 0)[1]"),
    ("float", "h.float()"), ("half", "h.half()"), ("bfloat16", "h.bfloat16()"), ("double", "h.double()"),
    ("to", "h.to(torch.float64)"), ("type_as", "h.type_as(x)"), ("type", "h.type(torch.float64)"),
    ("t", "h[0].t()"), ("torch.t", "torch.t(h[0])"), ("clone", "h.clone()"), ("torch.clone", "torch.clone(h)"),
    ("view_as", "h.view_as(x)"), ("reshape_as", "h.reshape_as(x)"), ("swapaxes", "h.swapaxes(0, 1)"),
    ("torch.swapaxes", "torch.swapaxes(h, 1, 2)"), ("unflatten", "h.unflatten(-1, (2, 2))"),
    ("torch.unflatten", "torch.unflatten(h, -1, (2, 2))"), ("detach", "h + h.detach()"),
    ("torch.detach", "h + torch.detach(h)"), ("repeat", "h.repeat(1, 2, 1)"), ("tril", "h.tril()"),
    ("torch.tril", "torch.tril(h)"), ("triu", "h.triu(1)"), ("torch.triu", "torch.triu(h)"),
    ("flip", "h.flip(1)"), ("torch.flip", "torch.flip(h, (1,))"), ("roll", "h.roll(1, 1)"),
    ("torch.roll", "torch.roll(h, 1, 1)"), ("narrow", "h.narrow(-1, 0, 2)"), ("torch.narrow", "torch.narrow(h, 1, 1, 2)"),
    ("movedim", "h.movedim(0, -1)"), ("torch.movedim", "torch.movedim(h, 0, -1)"),
    ("torch.view_as_complex", "torch.view_as_real(torch.view_as_complex(h.unflatten(-1, (2, 2))))"),
    ("torch.view_as_real", "torch.view_as_real(torch.view_as_complex(h.unflatten(-1, (2, 2)))).sum(-1)"),
    ("sum", "h.sum(-1)"), ("torch.sum", "torch.sum(h, -1)"), ("mean", "h.mean(-1)"), ("torch.mean", "torch.mean(h)"),
    ("neg", "h.neg()"), ("torch.neg", "torch.neg(h)"), ("add", "h.add(x)"), ("torch.add", "torch.add(h, x)"),
    ("sub", "h.sub(x)"), ("torch.sub", "torch.sub(x, h)"), ("cumsum", "h.cumsum(-1)"),
    ("torch.cumsum", "torch.cumsum(h, 1)"), ("add_", "h.clone().add_(x)"), ("sub_", "h.clone().sub_(x)"),
    ("torch.cat", "torch.cat([h, x], -1)"), ("torch.concat", "torch.concat((h, x), dim=1)"),
    ("torch.concatenate", "torch.concatenate([x, h], 0)"), ("torch.stack", "torch.stack([h, x], 1)"),
    ("torch.nn.functional.gelu", "F.gelu(h)"), ("torch.nn.functional.softplus", "F.softplus(h)"),
    ("torch.nn.functional.silu", "F.silu(h)"), ("torch.nn.functional.mish", "F.mish(h)"),
    ("torch.nn.functional.elu", "F.elu(h)"), ("torch.nn.functional.leaky_relu", "F.leaky_relu(h, 0.2)"),
    ("torch.nn.functional.relu6", "F.relu6(h)"), ("torch.nn.functional.hardtanh", "F.hardtanh(h)"),
    ("torch.nn.functional.glu", "F.glu(h, -1)"), ("torch.nn.functional.relu", "F.relu(h)"),
    ("torch.nn.functional.sigmoid", "F.sigmoid(h)"), ("torch.nn.functional.tanh", "F.tanh(h)"),
    ("torch.nn.functional.softmax", "F.softmax(h, dim=-1)"),
    ("torch.nn.functional.log_softmax", "F.log_softmax(h, -1)"), ("torch.nn.functional.pad", "F.pad(h, (1, 1))"),
    ("rms_norm", "F.rms_norm(h, (h.shape[-1],))"), ("rms_norm", "F.rms_norm(h, (4,), self.proj.bias)"),
    ("number / tensor", "2.0 / h"),
    ("torch.scatter", "torch.scatter(h, -1, idx, 0.0)"), ("scatter", "h.scatter(-1, idx, x)"),
    ("scatter_", "h.clone().scatter_(-1, idx, 1.0)"), ("torch.repeat_interleave", "torch.repeat_interleave(h, 2, dim=1)"),
    ("repeat_interleave", "h.repeat_interleave(3, -1)"), ("torch.nn.functional.logsigmoid", "F.logsigmoid(h)"),
    ("torch.nn.functional.batch_norm", "F.batch_norm(h, None, None, training=True)"),
    ("torch.bernoulli", "torch.bernoulli(h.sigmoid())"), ("bernoulli", "h.sigmoid().bernoulli()"),
    ("bernoulli_", "h.clone().bernoulli_(0.5)"),
    ("torch.linalg.solve_triangular",
     "torch.linalg.solve_triangular(torch.triu(h[..., :3]) + 4 * x[..., :3] ** 2 + 1.0, h.transpose(-1, -2)[..., :3], upper=True, left=False)"),
    *[(key, "self.op(h)") for key in MODULE_KEYS],
]
ROWS_BY_CLASS = {f"Row{index}": row for index, row in enumerate(ROWS)}


def _source() -> str:
    lines = ["import torch", "import torch.nn.functional as F", "from torch import nn", ""]
    for cls, (key, expression) in ROWS_BY_CLASS.items():
        op = f"        self.op = {MODULE_KEYS[key]}\n" if key in MODULE_KEYS else ""
        lines.append(f"\nclass {cls}(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
                     f"        self.proj = nn.Linear(d, d)\n{op}\n"
                     f"    def forward(self, x, mask, idx):\n        h = self.proj(x)\n        return {expression}\n")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    """{class: (ours: totals.memory.activations or the reason, autograd's bytes)}."""
    folder = tmp_path_factory.mktemp("saved_table")
    path = folder / "ops.py"
    path.write_text(_source())
    ours = {}
    classes = list(ROWS_BY_CLASS)
    for start in range(0, len(classes), 60):
        entries = "".join(
            f"  {cls}: {{entry: '{path.as_posix()}:{cls}.forward', mode: training, "
            f"inputs: {{x: float32 B T d, mask: bool B T d, idx: int64 B T k}}}}\n" for cls in classes[start:start + 60])
        config = folder / f"tensorcost{start}.yaml"
        config.write_text(f"dims: {json.dumps(DIMS)}\nmodels:\n{entries}")
        import contextlib
        import io

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["model", "--config", str(config), "--format", "json"]) == 0
        for record in json.loads(out.getvalue())["models"]:
            memory = record["totals"]["memory"]
            ours[record["name"]] = memory["activations"] if memory["activations"] is not None \
                else memory["unknown"]["activations"]
    spec = importlib.util.spec_from_file_location("saved_table_ops", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the test's own generated fixture, run by torch as the reference
    figures = {}
    for cls in classes:
        torch.manual_seed(0)
        model = getattr(module, cls)(DIMS["d"])
        x = torch.randn(DIMS["B"], DIMS["T"], DIMS["d"])
        mask = torch.rand(DIMS["B"], DIMS["T"], DIMS["d"]) > 0.5
        idx = torch.randint(0, DIMS["d"], (DIMS["B"], DIMS["T"], DIMS["k"]))
        out = model(x, mask, idx)
        loss = (torch.view_as_real(out) if out.is_complex() else out).float().sum()
        figures[cls] = (ours[cls], saved_activation_bytes(loss, model))
    return figures


@pytest.mark.parametrize("cls", list(ROWS_BY_CLASS), ids=[f"{key}: {expression}" for key, expression in ROWS])
def test_saved_bytes_equal_autograds(figures, cls):
    ours, reference = figures[cls]
    assert ours == reference


def test_every_table_entry_has_a_row():
    tested = {key for key, _ in ROWS}
    assert {*FUNCTIONS, *METHODS, *MODULES} - NOT_TORCH <= tested
    for key, expression in ROWS:  # each row calls what it names
        if key in FUNCTIONS or key in METHODS:
            name = key.rsplit(".", 1)[-1]
            assert re.search(rf"\b{re.escape(name)}\(", expression.replace("F.", "torch.nn.functional.")), (key, expression)
