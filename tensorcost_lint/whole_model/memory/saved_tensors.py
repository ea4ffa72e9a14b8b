"""What one contraction or attention call reads, makes and saves for backward, as storages.

torch's autograd saves, for C = A @ B, A when B needs a gradient and B when A does — but the tensor
it saves is the one the kernel ran on: `torch.matmul` folds a 3-D input into a matrix (a view when
its leading dims merge, a copy otherwise) and feeds batched products to `bmm` after
`expand(...).reshape(batch, n, m)` (a copy when the batch dims of a transposed head split cannot
merge). `_matmul_operands` follows `at::native::_matmul_impl` (torch 2.x) step by step over the
operands' layouts; `F.linear`/`nn.Linear` fold their input the same way. A fused attention saves
query, key, value, its output and the log-sum-exp (float32, one per query row).

einsum-style sites (`torch.einsum`, einops, jax) are taken to save their operands as they are: an
approximation (README: Known limits)."""

from __future__ import annotations

from dataclasses import dataclass

from .storage import Layout
from ..values.strides import product, view_strides

OUTPUT = "output"  # stands for the site's output storage, known once the call has returned


@dataclass(slots=True)
class SiteMemory:
    """The storages a call hands its kernel (per operand: the operand's own or a copy), and what a
    fused attention adds (its log-sum-exp); which of them autograd keeps follows the gradients."""

    effective: tuple  # per operand: a Storage, or None (a parameter weight of nn.Linear)
    attention: bool = False
    extra: tuple = ()  # attention: the log-sum-exp storage
    output: object = None  # the result's storage, linked when the call returns
    read: tuple = ()  # the operands' own storages (a copy reads its source)
    # torch's fused kernels write [B, T, H, D] and return its transpose: `out.transpose(1, 2)` is
    # then contiguous and `.contiguous()` keeps the storage
    heads_transposed_output: bool = False
    # what the backward keeps whenever any operand needs a gradient, when that is not the operands
    # the FLOPs are costed on (a convolution keeps its input, not the im2col view): storages
    keeps: tuple | None = None
    also_keeps: tuple = ()  # kept beside the operands whenever one needs a gradient (grouped_mm's offsets)

    def used(self) -> tuple:
        found = [s for s in self.read if s is not None]
        found += [s for s in self.effective if s is not None and s not in found]
        return tuple(found) + self.extra + (OUTPUT,)

    def saved(self, grads: tuple) -> tuple:
        if not any(grads):
            return ()
        if self.keeps is not None:
            return tuple(s for s in self.keeps if s is not None)
        return self._by_operand(grads) + self.also_keeps

    def _by_operand(self, grads: tuple) -> tuple:
        if self.attention:
            return (tuple(s for s in self.effective if s is not None) + (OUTPUT,) + self.extra) if any(grads) else ()
        if len(self.effective) != 2:
            return tuple(s for s in self.effective if s is not None) if any(grads) else ()
        saved = []
        if len(grads) > 1 and grads[1] and self.effective[0] is not None:
            saved.append(self.effective[0])  # dA = dC @ Bᵀ needs nothing of A; dB = Aᵀ @ dC needs A
        if grads and grads[0] and self.effective[1] is not None:
            saved.append(self.effective[1])
        return tuple(saved)


def site_memory(tracker, site, grads: tuple, linear_weight_is_parameter: bool) -> SiteMemory:
    """`grads`: per operand, needs a gradient (matmul folds a 3-D operand when the other one does)."""
    operands = site.operands
    if site.spec.operation == "convolution":
        return _convolution(tracker, site)
    layouts = []
    for index, fact in enumerate(operands):
        if index == 1 and site.spec.model == "linear" and linear_weight_is_parameter:
            layouts.append(None)  # an nn.Linear weight: a parameter
        else:
            layouts.append(tracker.ensure(fact))
    model = site.spec.model
    if model == "attention":
        query = layouts[0] if layouts else None
        rows = None if query is None or query.sizes is None else product(query.sizes[:-1])
        # the log-sum-exp of each query row, kept in float32 whatever the inputs' dtype
        inputs = tuple(_as_is(layout) for layout in layouts)
        return SiteMemory(inputs, True, (tracker.copy_storage(rows, "float32"),), read=inputs,
                          heads_transposed_output=site.spec.layout == "bhsd")
    if model == "linear" and len(layouts) == 2:
        effective = (_folded(tracker, layouts[0]), _as_is(layouts[1]))
    elif model == "matmul" and len(layouts) == 2 and None not in layouts:
        effective = _matmul_operands(tracker, layouts, grads)
    else:
        effective = tuple(_as_is(layout) for layout in layouts)
    return SiteMemory(tuple(effective), read=tuple(_as_is(layout) for layout in layouts),
                      also_keeps=_group_offsets(tracker, site) if model == "grouped_mm" else ())


def _group_offsets(tracker, site) -> tuple:
    """`grouped_mm(a, b, offs=offs)`: GroupedMmBackward0 keeps the group offsets (int32, one per group)
    with the operands."""
    node = site.span._node if site.span is not None else None
    if node is None:
        return ()
    for index, arg in enumerate(node.args):
        if (arg.keyword is not None and arg.keyword.value == "offs") or (arg.keyword is None and index == 2):
            layout = tracker.ensure(tracker.seen.get(id(arg.value)))
            return () if layout is None else (layout.storage,)
    return ()


def _convolution(tracker, site) -> SiteMemory:
    """torch's convolution (ConvolutionBackward0) keeps its input and its weight as they were passed
    whenever the input, the weight or the bias needs a gradient; the site's operands are the im2col
    view its FLOPs are costed on, which no kernel allocates. `site.arguments`: (input, weight), the
    weight None for a module's own parameter; none when the kernel runs on a copy (a padding mode)."""
    read = tuple(_as_is(tracker.ensure(fact)) for fact in site.operands)
    if len(site.arguments) != 2:
        return SiteMemory(read, read=read)  # approximate: memory_activations says so
    x, weight = (_as_is(tracker.ensure(fact)) for fact in site.arguments)
    return SiteMemory(read, read=read, keeps=(x, weight))


def _as_is(layout):
    return None if layout is None else layout.storage


def _copy(tracker, numel, layout: Layout):
    return tracker.copy_storage(numel, layout.storage.dtype)


def _folded(tracker, layout: Layout | None):
    """`input.reshape(-1, in_features)` of a linear or a folded matmul: a view or a copy."""
    if layout is None:
        return None
    sizes = layout.sizes
    if sizes is None or len(sizes) <= 2 or layout.strides is None:
        return layout.storage
    target = (product(sizes[:-1]), sizes[-1])
    if view_strides(sizes, layout.strides, target) is not None:
        return layout.storage
    return _copy(tracker, product(sizes), layout)


def _merge_ok(sizes, strides) -> bool:
    """torch's should_fold test: the leading dims (all but the last) collapse without a copy."""
    for i in range(len(sizes) - 2):
        if strides[i] != strides[i + 1] * sizes[i + 1]:
            return False
    return True


def _transposed(layout: Layout) -> Layout:
    sizes, strides = layout.sizes, layout.strides
    return Layout(layout.storage, sizes[:-2] + (sizes[-1], sizes[-2]), strides[:-2] + (strides[-1], strides[-2]))


def _matmul_operands(tracker, layouts, grads):
    """The two tensors `torch.matmul(a, b)` hands to mm/bmm: each the operand's storage (a view)
    or a copy it makes."""
    a, b = layouts
    if a.sizes is None or b.sizes is None or a.strides is None or b.strides is None:
        return a.storage, b.storage
    dim_a, dim_b = len(a.sizes), len(b.sizes)
    if dim_a <= 2 and dim_b <= 2:
        return a.storage, b.storage  # dot / mv / mm take their operands as they are
    a_larger = dim_a >= dim_b
    t1 = a if a_larger else _transposed(b)
    dim_t2 = dim_b if a_larger else dim_a
    fold = False
    if len(t1.sizes) >= 3 and dim_t2 <= 2:
        t2_needs_grad = grads[1] if a_larger else grads[0]
        if t2_needs_grad or product(t1.sizes) == 0:
            fold = True
        elif dim_a != 2:
            fold = _merge_ok(t1.sizes, t1.strides)
    if fold:
        folded = _folded(tracker, t1)
        return (folded, b.storage) if a_larger else (a.storage, folded)
    if dim_a < 2 or dim_b < 2:
        return a.storage, b.storage  # batched matrix-vector forms: not modelled further
    batch = _broadcast(a.sizes[:-2], b.sizes[:-2])
    if batch is None:
        return a.storage, b.storage
    return _batched(tracker, a, batch), _batched(tracker, b, batch)


def _broadcast(left, right):
    result = []
    for i in range(max(len(left), len(right))):
        x = left[len(left) - 1 - i] if i < len(left) else 1
        y = right[len(right) - 1 - i] if i < len(right) else 1
        if x != y and 1 not in (x, y):
            return None
        result.append(max(x, y))
    return tuple(reversed(result))


def _batched(tracker, layout: Layout, batch):
    """`t.expand(batch + [n, m]).reshape(prod(batch), n, m)`: a view or a copy of the expanded size."""
    sizes, strides = layout.sizes, layout.strides
    expanded = tuple(batch) + sizes[-2:]
    lead = len(expanded) - len(sizes)
    expanded_strides = [0] * lead
    for old, stride, new in zip(sizes, strides, expanded[lead:]):
        expanded_strides.append(stride if old == new else 0)
    target = (product(batch),) + sizes[-2:]
    if view_strides(expanded, tuple(expanded_strides), target) is not None:
        return layout.storage
    return _copy(tracker, product(expanded), layout)
