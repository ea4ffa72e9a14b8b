"""Which tensors of a whole-model run share memory: every tensor fact is a layout (sizes and strides,
as torch computes them) over one storage. Views (`view`/`reshape` when torch can view, `transpose`,
`permute`, `split`, `chunk`, `unsqueeze`, `expand`, basic indexing, `.T`, a same-dtype `.to`) keep
their source's storage; every other op makes a fresh one. Retained-bytes counting (retention.py)
counts storages, not facts: `q, k, v = qkv.split(...)` and the `hidden_states` that q/k/v
projections all save are one storage each, as torch's `untyped_storage()` says.

Sizes are numbers (the run's dims): a layout decision such as "can this reshape be a view" is
torch's own `computeStride` over concrete sizes, so a size-1 dim behaves as it does in torch. A fact
whose sizes are not all known has no strides; torch's copies cannot be decided for it and it is
treated as contiguous (README: Known limits)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ...analysis import op_table
from ...analysis.facts import ModuleFact, SequenceFact, TensorFact
from ...analysis.literals import int_value
from ..values.objects import Created
from ..values.strides import contiguous_strides, is_contiguous, numeric_shape, product, view_strides

# the view kinds of analysis/op_table.py, by method; `torch.NAME(x, ...)` functions read as the method
_RESHAPES = op_table.methods_of(op_table.RESHAPE)
_VIEWS = op_table.methods_of(op_table.VIEW)
_SAME_IF_DTYPE = op_table.methods_of(op_table.SAME_IF_DTYPE)
_PIECES = op_table.methods_of(op_table.PIECES)
_ALIASES = op_table.methods_of(op_table.ALIAS)
_CONTIGUOUS = op_table.methods_of(op_table.CONTIGUOUS)
_FUNCTIONS = op_table.VIEW_FUNCTIONS


class Storage:
    """One allocation. Compared by identity: two equal-sized tensors are still two storages."""

    __slots__ = ("numel", "dtype", "parameter")

    def __init__(self, numel: int | None, dtype: str | None, parameter: bool = False) -> None:
        self.numel = numel  # elements; None when a size is not known
        self.dtype = dtype  # None: the config's default dtype
        self.parameter = parameter


@dataclass(frozen=True, slots=True)
class Layout:
    storage: Storage
    sizes: tuple | None  # ints, or None when a size is not known
    strides: tuple | None  # ints (elements), or None when not known


class StorageTracker:
    """The layout of every tensor fact a run makes, keyed by the fact's identity (the fact is kept
    alive with it, so an id is never reused), and the last fact each expression node evaluated to
    (a view's receiver is read from there, never evaluated twice)."""

    def __init__(self, run) -> None:
        self.run = run
        self.layouts: dict = {}  # id(fact) -> (fact, Layout)
        self.seen: dict = {}  # id(cst node) -> the fact it last evaluated to
        self.pending: dict = {}  # id(site's cst node) -> SiteMemory whose output is not linked yet
        self.failure: str | None = None  # why retained bytes could not be computed
        # bumped when a tensor's storage is replaced or a storage becomes a parameter: what a name
        # holds may then change while its value stays the same object (memory/held_names.py)
        self.version = 0

    def layout(self, fact) -> Layout | None:
        found = self.layouts.get(id(fact))
        return found[1] if found is not None and found[0] is fact else None

    def _set(self, fact, layout: Layout) -> None:
        found = self.layouts.get(id(fact))
        if found is not None and found[1].storage is not layout.storage:
            self.version += 1
        self.layouts[id(fact)] = (fact, layout)

    def fresh(self, fact, parameter: bool = False) -> Layout:
        """A new storage holding `fact`, created here in the run's order."""
        sizes = numeric_shape(fact, self.run.sizes)
        storage = Storage(None if sizes is None else product(sizes), fact.dtype, parameter)
        layout = Layout(storage, sizes, None if sizes is None else contiguous_strides(sizes))
        self._set(fact, layout)
        self.run.add(Created(storage))
        return layout

    def ensure(self, fact) -> Layout | None:
        """The fact's layout; a fact made where the tracker could not see (a shape comment) is a
        fresh storage from here on."""
        if type(fact) is not TensorFact:
            return None
        return self.layout(fact) or self.fresh(fact)

    def mark_parameter(self, fact) -> None:
        layout = self.ensure(fact)
        if layout is not None and not layout.storage.parameter:
            layout.storage.parameter = True
            self.version += 1

    def copy_storage(self, numel: int | None, dtype: str | None) -> Storage:
        """A buffer an op makes for itself (matmul's reshape copy, attention's log-sum-exp)."""
        storage = Storage(numel, dtype)
        self.run.add(Created(storage))
        return storage

    def carried(self, entry_env: dict, exit_env: dict) -> tuple:
        """Storages of the tensors a loop body rebinds (`x = layer(x)`): the body sees them as
        they were before the loop, but every iteration after the first has its own."""
        found = []
        for name, fact in entry_env.items():
            if type(fact) is TensorFact and exit_env.get(name) is not fact:
                layout = self.layout(fact)
                if layout is not None and layout.storage not in found:
                    found.append(layout.storage)
        return tuple(found)

    # -- site outputs ----------------------------------------------------------------------------
    def expect_output(self, site, memory) -> None:
        node = site.span._node if site.span is not None else None
        if node is not None:
            self.pending[id(node)] = memory

    def link_output(self, node, fact) -> None:
        memory = self.pending.pop(id(node), None)
        layout = self.ensure(fact)
        if memory is not None and layout is not None:
            memory.output = layout.storage
            sizes = layout.sizes
            if memory.heads_transposed_output and sizes is not None and len(sizes) == 4:
                batch, heads, steps, width = sizes
                self._set(fact, Layout(layout.storage, sizes, (steps * heads * width, width, heads * width, 1)))

    # -- the evaluator's hook --------------------------------------------------------------------
    def observe(self, interp, node, fact) -> None:
        try:
            self._observe(interp, node, fact)
        except Exception as error:  # noqa: BLE001 - tracking memory must never cost the model its FLOPs
            self.fail(error)

    def fail(self, error) -> None:
        if self.failure is None:
            self.failure = f"internal error: {type(error).__name__}: {error}"

    def _observe(self, interp, node, fact) -> None:
        if type(fact) is TensorFact and self.layout(fact) is None:
            layout = self._derive(interp, node, fact)
            self._set(fact, layout) if layout is not None else self.fresh(fact)
        elif type(fact) is SequenceFact:
            receiver, layout = self._split_receiver(interp, node)
            for item in fact.items:
                if type(item) is TensorFact and self.layout(item) is None:
                    if layout is not None:
                        sizes = numeric_shape(item, self.run.sizes)
                        same_rank = sizes is not None and layout.strides is not None \
                            and len(sizes) == len(layout.strides)
                        self._set(item, Layout(layout.storage, sizes, layout.strides if same_rank else None))
                    else:
                        self.fresh(item)
        if node is not None:
            self.seen[id(node)] = fact
            if id(node) in self.pending:
                self.link_output(node, fact)

    def _receiver(self, node):
        fact = self.seen.get(id(node))
        return fact, (self.layout(fact) if type(fact) is TensorFact else None)

    def _split_receiver(self, interp, node):
        if isinstance(node, cst.Call):
            method, receiver_node, _ = self._method_call(interp, node)
            if method in _PIECES and receiver_node is not None:
                return self._receiver(receiver_node)
        return None, None

    def _method_call(self, interp, node: cst.Call):
        """(method name, receiver node, the other argument nodes) of `x.m(...)` or `torch.m(x, ...)`."""
        func = node.func
        name = interp.ctx.settings.imports.resolve(func)
        if name in _FUNCTIONS and node.args:
            return _FUNCTIONS[name], node.args[0].value, [a for a in node.args[1:]]
        if name is None and isinstance(func, cst.Attribute):
            return func.attr.value, func.value, list(node.args)
        return None, None, []

    def _derive(self, interp, node, fact) -> Layout | None:
        sizes = numeric_shape(fact, self.run.sizes)
        if isinstance(node, cst.Attribute):
            receiver, layout = self._receiver(node.value)
            if type(receiver) is ModuleFact and node.attr.value in ("weight", "bias"):
                return Layout(Storage(None if sizes is None else product(sizes), fact.dtype, True), sizes,
                              None if sizes is None else contiguous_strides(sizes))
            if layout is None:
                return None
            name = node.attr.value
            if name in ("data", "real"):
                return layout
            if name in ("T", "H"):
                return _permuted(layout, sizes, list(range(len(layout.strides or ())))[::-1])
            if name in ("mT", "mH") and layout.strides is not None and len(layout.strides) >= 2:
                order = list(range(len(layout.strides)))
                order[-2], order[-1] = order[-1], order[-2]
                return _permuted(layout, sizes, order)
            return None
        if isinstance(node, cst.Subscript):
            receiver, layout = self._receiver(node.value)
            return None if layout is None else _indexed(self, node, layout, sizes)
        if not isinstance(node, cst.Call):
            return None
        method, receiver_node, args = self._method_call(interp, node)
        if receiver_node is None:
            return None
        receiver, layout = self._receiver(receiver_node)
        if layout is None or type(receiver) is not TensorFact:
            return None
        return _method_layout(method, receiver, layout, fact, sizes, args, getattr(self.run, "default_dtype", None))


def _method_layout(method, receiver, layout: Layout, fact, sizes, args, default_dtype=None) -> Layout | None:
    strides = layout.strides
    if method in _RESHAPES:
        new = view_strides(layout.sizes, strides, sizes)
        if new is not None:
            return Layout(layout.storage, sizes, new)
        if strides is None and method != "view":
            return Layout(layout.storage, sizes, None)
        return None  # reshape of what cannot be viewed copies
    if method.endswith("_") or method in _ALIASES:
        return layout  # in place, or the input itself: the receiver's own storage
    if method in _CONTIGUOUS:
        return layout if is_contiguous(layout.sizes, strides) else None
    if method in _SAME_IF_DTYPE:  # a dtype the code names none of is the config's default_dtype
        same = (fact.dtype or default_dtype) == (receiver.dtype or default_dtype)
        return layout if same and sizes == layout.sizes else None
    if strides is None:
        return Layout(layout.storage, sizes, None) if method in _VIEWS else None
    rank = len(strides)
    if method in ("transpose", "swapaxes", "swapdims") and len(args) == 2:
        first, second = (_dim(a.value, rank) for a in args)
        if first is None or second is None:
            return Layout(layout.storage, sizes, None)
        order = list(range(rank))
        order[first], order[second] = order[second], order[first]
        return _permuted(layout, sizes, order)
    if method == "t":
        return _permuted(layout, sizes, list(range(rank))[::-1])
    if method == "permute":
        nodes = [a.value for a in args]
        if len(nodes) == 1 and isinstance(nodes[0], (cst.Tuple, cst.List)):
            nodes = [e.value for e in nodes[0].elements]
        order = [_dim(n, rank) for n in nodes]
        return _permuted(layout, sizes, order) if None not in order and len(order) == rank else \
            Layout(layout.storage, sizes, None)
    if method in ("unsqueeze", "squeeze", "expand", "expand_as", "broadcast_to"):
        return Layout(layout.storage, sizes, _reshaped_strides(method, layout, sizes, args))
    return None


def _dim(node, rank: int):
    value = int_value(node)
    if value is None and isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = int_value(node.expression)
        value = None if inner is None else -inner
    if value is None or not -rank <= value < rank:
        return None
    return value % rank


def _permuted(layout: Layout, sizes, order) -> Layout:
    strides = layout.strides
    if strides is None or len(order) != len(strides):
        return Layout(layout.storage, sizes, None)
    return Layout(layout.storage, sizes, tuple(strides[i] for i in order))


def _reshaped_strides(method, layout: Layout, sizes, args):
    old_sizes, strides = layout.sizes, layout.strides
    if sizes is None or old_sizes is None:
        return None
    if method == "unsqueeze":
        if len(args) != 1:
            return None
        dim = _dim(args[0].value, len(strides) + 1)
        if dim is None:
            return None
        stride = 1 if dim >= len(strides) else old_sizes[dim] * strides[dim]
        return strides[:dim] + (stride,) + strides[dim:]
    if method == "squeeze":
        kept = tuple(s for size, s in zip(old_sizes, strides) if size != 1)
        if len(kept) == len(sizes):
            return kept
        return tuple(strides) if len(strides) == len(sizes) else None
    # expand: new leading dims and expanded size-1 dims read one element over and over
    lead = len(sizes) - len(strides)
    if lead < 0:
        return None
    result = [0] * lead
    for old_size, stride, new_size in zip(old_sizes, strides, sizes[lead:]):
        result.append(stride if old_size == new_size else 0)
    return tuple(result)


def _indexed(tracker, node: cst.Subscript, layout: Layout, sizes) -> Layout | None:
    """Basic indexing (ints, slices, None, `...`) is a view; anything else (a list, a tensor) copies."""
    strides, old_sizes = layout.strides, layout.sizes
    elements = [e.slice for e in node.slice]
    kinds = []
    for element in elements:
        if isinstance(element, cst.Slice):
            step = 1 if element.step is None else int_value(element.step)
            if step is None:
                return None
            kinds.append(("slice", step))
            continue
        value = element.value
        if isinstance(value, cst.Ellipsis):
            kinds.append(("...", None))
        elif isinstance(value, cst.Name) and value.value == "None":
            kinds.append(("new", None))
        elif int_value(value) is not None or _dim(value, 1 << 62) is not None:
            kinds.append(("int", None))
        else:
            fact = tracker.seen.get(id(value))
            if type(fact) is TensorFact or isinstance(value, (cst.List, cst.Tuple)) or fact is None:
                return None  # advanced indexing gathers into a new tensor
            kinds.append(("int", None))
    if strides is None or old_sizes is None or sizes is None:
        return Layout(layout.storage, sizes, None)
    consumed = sum(1 for kind, _ in kinds if kind in ("int", "slice"))
    result, position = [], 0
    for kind, step in kinds:
        if kind == "...":
            for _ in range(len(strides) - consumed):
                result.append(strides[position])
                position += 1
        elif kind == "new":
            result.append(1)
        elif kind == "int":
            position += 1
        else:
            result.append(strides[position] * step)
            position += 1
    result.extend(strides[position:])
    return Layout(layout.storage, sizes, tuple(result)) if len(result) == len(sizes) else \
        Layout(layout.storage, sizes, None)
