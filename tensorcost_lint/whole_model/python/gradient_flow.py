"""Which tensors the backward reaches: autograd runs the backward of an op only when its output is
an ancestor of what the backward starts from (the tensors the entry returns). A value computed and
dropped (`pooler_output` of a base model whose causal-LM head reads only `last_hidden_state`) has
no backward at runtime, so its sites cost none and save nothing at the end of the forward.

The run records, for every tensor that needs a gradient, the tensors it was computed from: each
expression's result depends on the tensors evaluated and marked while it was evaluated (the grad
frames of model_flow), which over-approximates the dependencies (a site kept that could be
dropped costs what it did before), never under-approximates them. A site whose output is unknown
or not a tensor is kept; pruning only happens when everything the entry returns is understood and
the run lost nothing on the way (no unresolved site, every call followed): a value whose shape was
lost can carry a gradient the frames do not see (tokens routed to experts by an unknown index).
"""

from __future__ import annotations

import libcst as cst

from ...analysis import op_table
from ...analysis.facts import (
    DimFact, DTypeFact, IntFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, StringFact, TensorFact
)
from ..values.library_objects import MappingFact, RecordFact
from ..values.objects import (
    BackwardMatmul, BoolFact, Called, Checkpointed, Choice, Embedding, FunctionRef, ModuleDict, ModuleList, NoneValue,
    Repeat, Sequential, SiteEntry
)
from ..values.optional_values import MaybeNone
from .python_values import GrowingList

# a frame collects what flowed into the expression it belongs to; this stands for a gradient that
# flowed from tensors the run cannot name (an unknown argument replaced by its annotation)
OPAQUE = "\0opaque"
# the values that hold parameters (memory_parameters): the tree's own module objects, torch modules, containers
_MODULE_VALUES = (SelfFact, ModuleFact, Embedding, ModuleList, ModuleDict, Sequential)
# values a returned structure may hold that no backward starts from
_NO_TENSORS = (DimFact, DTypeFact, IntFact, ScalarFact, StringFact, BoolFact, NoneValue)


class GradientFlow:
    """Disabled outside training: nothing needs a gradient, so nothing is recorded."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.parents: dict = {}  # id(fact) -> (fact, list of facts it was computed from)
        self.outputs: list = []  # (entry, output fact): a site's or an op's result
        self.pending: dict = {}  # id(site node) -> entries whose output is the node's value
        # ids of the module objects an expression of the forward evaluated to with gradients on: a
        # parameter of a module never met there feeds no op, gets no .grad and no optimizer state
        # (parameter_gradients.py)
        self.modules_read: dict = {}  # id(module value) -> the value (held: ids stay unique)

    # -- recording ---------------------------------------------------------------------------------
    def derive(self, fact, sources) -> None:
        """`fact` was computed from `sources` (first record wins: a later read adds nothing)."""
        if not sources or id(fact) in self.parents:
            return
        self.parents[id(fact)] = (fact, [s for s in sources if s is not fact])

    def merge(self, fact, sources) -> None:
        """`fact` also depends on `sources` (an in-place update, a value joined over branches)."""
        known = self.parents.get(id(fact))
        extra = [s for s in sources if s is not fact]
        if not extra:
            return
        if known is None or known[0] is not fact:
            self.parents[id(fact)] = (fact, extra)
        else:
            known[1].extend(extra)

    def expect(self, node, entry) -> None:
        """`entry` is a site of `node`: one call may run several (nn.MultiheadAttention's
        projections and attention), each alive exactly when the call's value is reached."""
        if self.enabled and node is not None:
            self.pending.setdefault(id(node), []).append(entry)

    def settle(self, node, fact, forward: bool = False) -> None:
        """The value of a site's node, once evaluated: the output of each site it ran. `forward`:
        evaluated by the forward (not while building a module) with gradients on."""
        if forward and self.enabled and type(fact) in _MODULE_VALUES:
            self.modules_read[id(fact)] = fact
        for entry in self.pending.pop(id(node), ()):
            self.outputs.append((entry, fact))

    def output(self, entry, fact) -> None:
        if self.enabled:
            self.outputs.append((entry, fact))

    # -- the backward ------------------------------------------------------------------------------
    def prune(self, returned, top: list, followed_whole: bool, state=()) -> None:
        """Drop the backward of every site (and what ops save) whose output the returned value does
        not depend on. Nothing is dropped when the returned value holds anything the run cannot
        describe, a site is unresolved, or a call was not followed (`followed_whole` False).
        `state`: the objects the forward returns to keep state in (a cache, kv_cache.cache_objects):
        a loss is a tensor computed from the outputs, never from what a cache object holds (a
        linear attention's running `K^T V` kept only for the next step has no backward), so the
        backward does not start from their tensors; with nothing else returned, nothing is dropped."""
        if not followed_whole:
            return
        tree: dict = {}
        _entries(top, tree)
        if any(type(entry) is SiteEntry and entry.site.unresolved for entry in tree.values()):
            # a shape lost on the way may carry a gradient the run cannot follow (tokens routed
            # to experts through an unknown index): what it reaches is not known, nothing is dropped
            return
        roots: list = []
        if not _tensors_of(returned, roots, {id(item) for item in state}) or not roots:
            return
        reached: set = set()
        work = list(roots)
        while work:
            fact = work.pop()
            if id(fact) in reached:
                continue
            reached.add(id(fact))
            record = self.parents.get(id(fact))
            if record is not None and record[0] is fact:
                if any(f is OPAQUE for f in record[1]):
                    return  # computed from something the run cannot name: every site may reach it
                work.extend(f for f in record[1] if type(f) is TensorFact and id(f) not in reached)
        # an entry shared by several calls (a summary) is dead only when every output it had is
        alive = {id(entry) for entry, fact in self.outputs if _reaches(fact, reached)}
        dead = {id(entry): entry for entry, fact in self.outputs if id(entry) not in alive}
        for entry in dead.values():
            if id(entry) not in tree:
                continue
            if type(entry) is SiteEntry or type(entry) is BackwardMatmul:
                entry.grads = tuple(False for _ in entry.grads)
            else:  # memory_activations.OpSaved, index_memory.PartialRead
                entry.storages = ()


def updated_in_place(run, interp, node, flowed) -> None:
    """`out.add_(y)`, `buf.copy_(x)`, `acc.index_add_(0, i, y)`: an in-place method changes the
    tensor its receiver names, which from then on is computed from the call's operands too (and
    needs a gradient if one of them does). The call's result is the receiver at runtime; the
    analysis's is a new fact, so the name's own fact is updated here."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute) \
            or not isinstance(node.func.value, cst.Name):
        return
    name = node.func.attr.value
    if not name.endswith("_") or name.endswith("__"):
        return
    receiver = interp.env.get(node.func.value.value)
    if type(receiver) is TensorFact:
        run.mark(receiver, [f for f in flowed if f is not receiver], merge=True)


# functions making a new tensor from sizes, values or another tensor's metadata
# (`torch.zeros_like(h)`): autograd records nothing, so the result needs no gradient whatever it read;
# methods doing the same from the receiver (`h.new_zeros(...)`), or cutting it from the graph
# (`h.detach()`): the entries of analysis/op_table.py that cut the gradient
_FRESH_FUNCTIONS = op_table.GRADIENT_CUT_FUNCTIONS
_FRESH_METHODS = op_table.GRADIENT_CUT_METHODS


def cuts_gradient(interp, node) -> bool:
    """A call whose result needs no gradient though it reads tensors that do: a constructor
    (`torch.zeros_like(h)`, `h.new_zeros(n, d)`) or `h.detach()`; not one asked for one
    (`requires_grad=True`)."""
    if not isinstance(node, cst.Call) or any(arg.keyword is not None and arg.keyword.value == "requires_grad"
                                             for arg in node.args):
        return False
    if isinstance(node.func, cst.Attribute) and node.func.attr.value in _FRESH_METHODS:
        return interp.ctx.settings.imports.resolve(node.func) is None  # a method, not `torch.detach`
    return interp.ctx.settings.imports.resolve(node.func) in _FRESH_FUNCTIONS


def stored_into(run, interp, target, flowed) -> None:
    """`buf[:, i] = y`: writing into part of a tensor (autograd's copy into a view of its base)
    makes the base computed from what was written too, and needing a gradient if that does, as
    in-place methods do (`updated_in_place`). Only a base a name holds is followed."""
    base = target
    while isinstance(base, cst.Subscript):
        base = base.value
    if not flowed or not isinstance(target, cst.Subscript) or not isinstance(base, cst.Name):
        return
    receiver = interp.env.get(base.value)
    if type(receiver) is TensorFact:
        run.mark(receiver, [f for f in flowed if f is not receiver], merge=True)


def _reaches(fact, reached: set) -> bool:
    if type(fact) is TensorFact:
        return id(fact) in reached
    if type(fact) is SequenceFact:
        return any(_reaches(item, reached) for item in fact.items)
    return True  # an output the run cannot describe is kept


def _tensors_of(value, into: list, seen: set) -> bool:
    """The tensors inside a returned value (tuples, mappings, records' fields, objects'
    attributes); False when a part of it is unknown, so the backward's start is not known whole."""
    if id(value) in seen:
        return True
    seen.add(id(value))
    if value is None:
        return False
    kind = type(value)
    if kind is TensorFact:
        into.append(value)
        return True
    if kind is SequenceFact:
        parts = value.items
    elif kind is MappingFact:
        parts = [item for _, item in value.items]
    elif kind is RecordFact:
        parts = [item for _, item in value.fields]
    elif kind is SelfFact:
        parts = list(value.attributes.values())
    elif kind is MaybeNone:
        parts = [value.value]
    elif kind is GrowingList:
        if value.unknown:
            return False
        parts = [item for item, _ in value.runs]
    elif kind in _NO_TENSORS:
        return True
    else:
        return False  # a value of a kind not read here: the backward's start is not known whole
    return all(_tensors_of(part, into, seen) for part in parts)


def _entries(entries, into: dict) -> None:
    """Every entry of the run's tree, by id (a shared summary's list once)."""
    for entry in entries:
        into[id(entry)] = entry
        if type(entry) in (Repeat, Called, Checkpointed):
            if id(entry.entries) not in into:
                into[id(entry.entries)] = entry.entries
                _entries(entry.entries, into)
        elif type(entry) is Choice:
            for side in entry.sides:
                _entries(side, into)


def flow_into(frames: list, facts) -> None:
    """Add `facts` to the innermost grad frame: the expression being evaluated depends on them."""
    if not frames or not facts:
        return
    top = frames[-1]
    if top is None:
        frames[-1] = list(facts)
    else:
        top.extend(f for f in facts if not top or f is not top[-1])


def union(a, b) -> list:
    """The facts of two frames' lists, each once (branches joined over and over stay small)."""
    return list({id(f): f for f in (*(a or ()), *(b or ()))}.values())


def grad_items(run, fact) -> list:
    """The tensors `fact` holds that need a gradient (a list built by appends stands for what it holds)."""
    growing = type(fact) is GrowingList
    items = tuple(item for item, _ in fact.runs) if growing else fact.items if type(fact) is SequenceFact else (fact,)
    return [item for item in items if type(item) is TensorFact and run.needs_grad(item)]


def returned_by_tree_code(run, node, fact) -> bool:
    """`self.rotary_emb(x, ids)`: a call of the tree's own code whose result it computed (memory:
    `cos, sin` made from position ids need no gradient though `x` does)."""
    if type(node) is not cst.Call or type(fact) not in (TensorFact, SequenceFact):
        return False
    callee = run.storage.seen.get(id(node.func))
    return type(callee) is FunctionRef or (type(callee) is SelfFact and run.instance(callee) is not None)
