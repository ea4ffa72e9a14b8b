"""The layout rules retained bytes rest on, against torch itself: when a reshape can be a view
(`view_strides` is torch's computeStride), and which tensors `torch.matmul` hands to mm/bmm —
the operand's own storage or a copy of it — for contiguous, transposed, split and broadcast
operands."""

import itertools

import pytest

torch = pytest.importorskip("torch")

from tensorcost_lint.whole_model.memory.saved_tensors import _matmul_operands  # noqa: E402
from tensorcost_lint.whole_model.memory.storage import Layout, Storage  # noqa: E402
from tensorcost_lint.whole_model.values.strides import is_contiguous, view_strides  # noqa: E402


def _views():
    base = torch.zeros(2, 3, 4, 5)
    yield base
    yield base.transpose(1, 2)
    yield base.permute(0, 2, 1, 3)
    yield base[:, :, :2]  # a slice: rows strided
    yield base.transpose(-2, -1)
    yield torch.zeros(1, 3, 4, 5).transpose(0, 1)  # size-1 dims merge with anything
    yield torch.zeros(2, 1, 4, 5).expand(2, 3, 4, 5)


@pytest.mark.parametrize("tensor", list(_views()), ids=lambda t: f"{tuple(t.shape)}/{t.stride()}")
def test_view_strides_is_torchs_compute_stride(tensor):
    sizes, strides = tuple(tensor.shape), tensor.stride()
    numel = tensor.numel()
    targets = {(numel,), (sizes[0] * sizes[1], sizes[2], sizes[3]), (sizes[0], sizes[1] * sizes[2] * sizes[3]),
               (sizes[0] * sizes[1] * sizes[2], sizes[3]), (1,) + sizes, sizes[:2] + (1,) + sizes[2:]}
    for target in targets:
        try:
            expected = tensor.view(target).stride()
        except RuntimeError:
            expected = None
        assert view_strides(sizes, strides, target) == expected, target
    assert is_contiguous(sizes, strides) == tensor.is_contiguous()


class _Tracker:
    def __init__(self) -> None:
        self.copies: list = []

    def copy_storage(self, numel, dtype):
        self.copies.append(Storage(numel, dtype))
        return self.copies[-1]


def _layout(tensor, storages: dict) -> Layout:
    key = tensor.untyped_storage().data_ptr()
    storage = storages.setdefault(key, Storage(tensor.untyped_storage().nbytes() // 4, "float32"))
    return Layout(storage, tuple(tensor.shape), tensor.stride())


def _saved_by_torch(a, b):
    """(storage data_ptr, numel) of the tensors the mm/bmm node saved for each operand."""
    out = torch.matmul(a, b)
    node = out.grad_fn
    while type(node).__name__ not in ("MmBackward0", "BmmBackward0"):
        node = node.next_functions[0][0]
    saved = {}
    for name in ("_saved_self", "_saved_mat2"):
        tensor = getattr(node, name, None)
        if isinstance(tensor, torch.Tensor):
            saved[name] = (tensor.untyped_storage().data_ptr(), tensor.numel())
    return saved


def _operand_cases():
    x = torch.randn(2, 6, 12)
    qkv = torch.randn(2, 6, 3 * 8)
    q = qkv.split(8, dim=2)[0].view(2, 6, 2, 4).transpose(1, 2)  # nanoGPT's head split
    k = qkv.split(8, dim=2)[1].view(2, 6, 2, 4).transpose(1, 2)
    scores = torch.randn(2, 2, 6, 6)
    w = torch.randn(12, 5)
    yield "fold-3d-by-2d", x, w
    yield "fold-transposed-3d", x.transpose(0, 1), w
    yield "heads-q-k", q, k.transpose(-2, -1)
    yield "scores-v", scores, k
    yield "broadcast-2d-rhs", scores, torch.randn(6, 3)
    yield "one-head-batch", torch.randn(1, 2, 6, 4).transpose(0, 1), torch.randn(2, 1, 4, 6)


@pytest.mark.parametrize("name, a, b", list(_operand_cases()), ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("grads", list(itertools.product([False, True], repeat=2)), ids=str)
def test_matmul_operands_are_the_tensors_torch_saves(name, a, b, grads):
    if not any(grads):
        return  # nothing is saved without a gradient
    # requires_grad on a leaf copy with the same layout: a view of a leaf that needs a gradient
    leaves = []
    for tensor, needs in zip((a, b), grads):
        base = tensor._base if tensor._base is not None else tensor
        base = base.detach().requires_grad_(needs)
        leaves.append(base.as_strided(tensor.shape, tensor.stride(), tensor.storage_offset()))
    saved = _saved_by_torch(*leaves)
    storages: dict = {}
    layouts = [_layout(t, storages) for t in leaves]
    tracker = _Tracker()
    ours = _matmul_operands(tracker, layouts, grads)
    for position, name_saved, needs_other in ((0, "_saved_self", grads[1]), (1, "_saved_mat2", grads[0])):
        if not needs_other:
            continue
        pointer, numel = saved[name_saved]
        mine = ours[position]
        if any(mine is copy for copy in tracker.copies):
            assert pointer not in storages and mine.numel == numel, (name_saved, "torch kept the operand's storage")
        else:
            assert storages.get(pointer) is mine, (name_saved, "torch made a copy")
