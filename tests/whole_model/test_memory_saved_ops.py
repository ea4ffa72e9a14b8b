"""What autograd keeps for ops reached the ways library code reaches them, and which parameters get
a gradient (Contract 9; fixtures/saved_ops): each `totals.memory` figure equal to torch's on the same
module — `activations` to autograd's saved tensors (walk `grad_fn`, every `_saved_*`), `gradients`
to the `.grad` bytes after a backward, `optimizer_states` to AdamW's states after its step."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.saved_ops import models  # noqa: E402
from tests.whole_model.memory_runs import parameter_bytes, saved_activation_bytes, state_bytes  # noqa: E402
from tests.whole_model.model_runs import model_record  # noqa: E402

FIXTURE = Path(models.__file__)
DIMS = {"B": 2, "T": 8, "d": 16, "c": 8, "vocab": 40, "e": 4}


def _memory(tmp_path, capsys, cls: str, inputs: dict) -> dict:
    record = model_record(tmp_path, capsys, DIMS, f"{FIXTURE}:{cls}.forward", inputs, "training")  # AdamW
    return record["totals"]["memory"]


def _saved(model, *inputs) -> int:
    torch.manual_seed(0)
    out = model(*inputs)
    return saved_activation_bytes(out.sum(), model)


def test_functions_held_as_values_and_partials_save_what_the_function_saves(tmp_path, capsys):
    """silu through `self.act = F.silu`, gelu through `functools.partial(F.gelu, approximate="tanh")`
    (each saves h), tanh written `torch.tanh` (its result), and the two wrapped numbers."""
    model = models.HeldFunctions(DIMS["d"])
    x = torch.randn(DIMS["B"], DIMS["T"], DIMS["d"])
    expected = _saved(model, x)
    memory = _memory(tmp_path, capsys, "HeldFunctions", {"x": "float32 B T d"})
    assert memory["activations"] == expected
    h, result = 2 * 8 * 32 * 4, 2 * 8 * 32 * 4
    assert expected == x.numel() * 4 + h + result + 2 * 8  # the input (the linear's), h, tanh, 1/30 and 30


def test_super_forward_of_an_embedding_subclass_saves_the_indices_it_looks_up(tmp_path, capsys):
    model = models.Embedder(DIMS["vocab"], DIMS["d"], DIMS["T"])
    ids = torch.randint(0, DIMS["vocab"], (DIMS["B"], DIMS["T"]))
    expected = _saved(model, ids)
    memory = _memory(tmp_path, capsys, "Embedder", {"ids": "int64 B T"})
    assert memory["activations"] == expected
    # token ids and the shifted positions (int64 each), the scale, and the head's input
    assert expected == 2 * ids.numel() * 8 + 8 + 2 * 8 * 16 * 4


def test_a_convolution_saves_its_input_not_the_unfolded_view(tmp_path, capsys):
    """nn.Conv1d keeps its input; `F.conv1d` on a view of the depthwise weight keeps its input and
    the (parameter) weight — not the im2col view [N, C, L, k] its FLOPs are costed on."""
    model = models.Convs(DIMS["c"])
    x = torch.randn(DIMS["B"], DIMS["c"], DIMS["T"])
    expected = _saved(model, x)
    memory = _memory(tmp_path, capsys, "Convs", {"x": "float32 B c T"})
    assert memory["activations"] == expected
    assert expected == 3 * x.numel() * 4  # x, the conv's output (silu's input), silu's output


def test_a_convolution_that_pads_a_copy_leaves_activations_unknown(tmp_path, capsys):
    memory = _memory(tmp_path, capsys, "CircularConv", {"x": "float32 B c T"})
    assert memory["activations"] is None
    assert "a convolution that pads into a copy" in memory["unknown"]["activations"]
    assert memory["optimizer_states"] is not None


def test_parameters_the_forward_never_uses_get_no_gradient_and_no_optimizer_state(tmp_path, capsys):
    """`cross` (run only with a memory), `spare` (never called): no .grad, no AdamW state; the head's
    weight, tied to the never-called embedding, gets both; the parameters count them all."""
    torch.manual_seed(0)
    model = models.Unused(DIMS["d"], DIMS["vocab"])
    x = torch.randn(DIMS["B"], DIMS["T"], DIMS["d"])
    optimizer = torch.optim.AdamW(model.parameters())
    model(x).sum().backward()
    optimizer.step()
    gradients = sum(p.grad.untyped_storage().nbytes() for p in model.parameters() if p.grad is not None)
    memory = _memory(tmp_path, capsys, "Unused", {"x": "float32 B T d"})
    assert memory["parameters"] == parameter_bytes(model)
    assert memory["gradients"] == gradients
    assert memory["optimizer_states"] == state_bytes(optimizer)
    assert model.cross.weight.grad is None and model.embed.weight.grad is not None


def test_routing_saves_its_indices_and_the_grouped_matmul_its_offsets(tmp_path, capsys):
    """topk's and sort's indices, each gather's index tensor (`perm // 2`, `perm`, the list [0, 1] made
    an int64 tensor), nothing for the 0-dim `perm[0]`, and grouped_mm's int32 offsets."""
    torch.manual_seed(0)
    model = models.Routed(DIMS["d"], DIMS["e"])
    x = torch.randn(DIMS["B"], DIMS["T"], DIMS["d"])
    expected = saved_activation_bytes(model(x), model)
    memory = _memory(tmp_path, capsys, "Routed", {"x": "float32 B T d"})
    assert memory["activations"] == expected


@pytest.mark.parametrize("cls", ["TinyMoE", "PlainMoE"])
def test_routed_experts_activations_equal_autograds(tmp_path, capsys, cls):
    """fixtures/styles/routed_experts (a registry-dispatched grouped-matmul mixture of experts): the
    router's topk indices, the gathers by index tensors and grouped_mm's offsets, over two layers."""
    from tests.whole_model.fixtures.styles.routed_experts import models as moe
    from tests.whole_model.test_routed_experts import DIMS as MOE_DIMS, FIXTURE as MOE, GROUPED

    torch.manual_seed(0)
    config = moe.MoEConfig(**{k: MOE_DIMS[k] for k in ("hidden_size", "intermediate_size", "num_experts", "top_k",
                                                       "num_layers")})
    model = getattr(moe, cls)(config)
    expected = saved_activation_bytes(model(torch.randn(2, 8, 32)).sum(), model)
    record = model_record(tmp_path, capsys, MOE_DIMS, f"{MOE}:{cls}.forward", {"x": "float32 B T hidden_size"},
                          "training", GROUPED)
    assert record["totals"]["memory"]["activations"] == expected


def test_modules_an_nn_sequential_runs_save_what_they_save_when_called(tmp_path, capsys):
    """GELU's input, the second linear's input, the layer norm's input and row statistics and
    tanh's result, through nn.Sequential's own forward (the GELU's input was missed: 25% short)."""
    torch.manual_seed(0)
    model = models.SequentialMlp(DIMS["d"])
    x = torch.randn(DIMS["B"], DIMS["T"], DIMS["d"])
    expected = _saved(model, x)
    memory = _memory(tmp_path, capsys, "SequentialMlp", {"x": "float32 B T d"})
    assert memory["activations"] == expected
