"""Values a whole-model run knows beyond the per-file facts: module objects built in `__init__`,
booleans and None for branch decisions, and the cost summaries that calls return."""

from __future__ import annotations

from dataclasses import dataclass, field

from shape_annotations import evaluate_integer


@dataclass(frozen=True)
class BoolFact:
    value: bool


class NoneValue:
    __slots__ = ()


NONE = NoneValue()


@dataclass(eq=False)
class Instance:
    """An object of a class of the tree (`Block(config)`): its attributes live in `self_fact`."""

    source: object  # source_tree.SourceFile
    cls: object  # cst.ClassDef
    self_fact: object  # facts.SelfFact bound to `self` in its methods
    # a subclass of a torch container: what `super().__init__(...)` put in it (a Sequential,
    # ModuleList or ModuleDict), run by `nn.Sequential.forward` when the tree gives no forward
    contents: object = None

    @property
    def class_name(self) -> str:
        return self.cls.name.value


@dataclass(frozen=True)
class ModuleList:
    """`nn.ModuleList([Block(c) for _ in range(n)])`: `count` copies of one built module (a
    comprehension builds one and repeats it), or the listed items."""

    items: tuple
    count: object = None  # DimExpr of the repetition; None when `items` are the elements
    # the int the one built item was built with (`Layer(config, i) for i in range(n)`): loop_indices
    index: object = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class ModuleDict:
    items: tuple  # ((name, value), ...)


@dataclass(frozen=True)
class Sequential:
    items: tuple
    count: object = None  # DimExpr: `items` is one module repeated (`nn.Sequential(*[Block() for ...])`)
    names: tuple | None = None  # `nn.Sequential(OrderedDict(...))`: each item's key, its path segment


@dataclass(frozen=True)
class Embedding:
    dim: object  # DimExpr of embedding_dim


@dataclass(frozen=True)
class FunctionRef:
    source: object
    node: object  # cst.FunctionDef
    bound: object = None  # an Instance for a bound method
    # a function defined inside another: the enclosing function's names (its env, read when the
    # function runs, as Python's closures read them late)
    closure: dict | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class ModuleRef:
    """A module of the tree bound to a name (`from . import c`, `import pkg.c as c`): `c.helper`
    is its top-level definition."""

    source: object  # source_tree.SourceFile


@dataclass(frozen=True)
class ClassRef:
    source: object
    node: object  # cst.ClassDef


@dataclass(frozen=True)
class FreshObject:
    """What `super().__new__(cls)` returns in a class's `__new__` when object's makes it: an object
    of `cls` no `__init__` has run on yet (the call `cls(...)` runs it next, as Python does)."""

    cls: ClassRef


# -- cost summaries: what one run of a function costs, as a tree of entries ----------------------

@dataclass(slots=True)
class SiteEntry:
    site: object  # CallSite
    module: str  # module path of the object that ran it ("" for the root)
    grads: tuple  # per operand: needs a gradient
    memory: object = None  # saved_tensors.SiteMemory: the storages it reads, makes and saves
    lost_at: object = None  # shape_loss.LostAt: where a shapeless operand lost its shape


@dataclass(slots=True)
class BackwardMatmul:
    """In training, an op that records no site forward (FlopCounterMode counts it 0) but whose
    backward runs a matmul for an operand's gradient (backward_matmuls.py): 2 × the product of
    `factors` FLOPs per execution, in its module's backward while `grads[0]` holds (gradient_flow
    clears it when the loss never reaches the op's result)."""

    module: str  # module path of the object that ran it
    where: tuple  # (path, line, column) of the call
    expression: str  # the call's code
    factors: tuple  # DimExpr each
    grads: tuple = (True,)


@dataclass(slots=True)
class Repeat:
    """Entries run `count` times (a loop over a ModuleList); count None: not known statically."""

    count: object  # DimExpr or None
    entries: list = field(default_factory=list)
    reason: str | None = None
    carried: tuple = ()  # storages of loop-carried values on entry: each iteration has its own


@dataclass(slots=True)
class UnrolledPass:
    """In training, a pass of an unrolled loop starts here (`position`), or the loop ends (None): the
    backward's liveness tells a repeated block's copies apart by it, as it does a Repeat's iterations
    (memory_peak). Every other walk passes over it."""

    position: int | None


@dataclass(slots=True)
class Called:
    """A call of the tree's code: the callee's summary (its entries, shared by every call with the
    same argument facts, never copied) run `count` times in a row. `h(x) + h(x)` is one Called of
    count 2, so a call tree costs what its distinct (function, arguments) pairs cost."""

    entries: list  # the callee's summary, shared with the memo
    count: int = 1


@dataclass(slots=True)
class Choice:
    """An undecided branch: each side's entries; the totals span [min, max] over the sides."""

    condition: str
    sides: tuple  # (list of entries, list of entries)


@dataclass(slots=True)
class Visit:
    """A module's forward starts here: the module tree counts its executions."""

    module: str


@dataclass(slots=True)
class Created:
    """A storage is allocated here (storage.Storage): once per execution of the enclosing loops."""

    storage: object


@dataclass(slots=True)
class Checkpointed:
    """`torch.utils.checkpoint.checkpoint(fn, *inputs)`: fn's entries run in the forward and again
    in the backward (the recompute); autograd keeps only the inputs for it."""

    module: str  # the module path the call is in
    inputs: tuple  # the input tensor facts
    entries: list = field(default_factory=list)


def modules_iterated(value):
    """What iterating `value` yields, for a module container: an nn.Sequential iterates (and has a
    length, reverses, lists) as a ModuleList of its modules does, in order; anything else as it is."""
    if type(value) is Sequential:
        return ModuleList(value.items, value.count)
    return value


def known_count(dim, sizes: dict):
    """A `Repeat`'s trip count under `sizes`, or None when it is unbound or negative (unknown)."""
    if dim is None:
        return None
    value = evaluate_integer(dim, sizes)  # a trip count is a Python int: `//` floors
    return value if value is not None and value >= 0 else None


@dataclass(frozen=True)
class CallableChoice:
    """`A if cond else B` for classes A and B of the tree, the condition undecided: calling it
    builds each side (choices.py)."""

    condition: str
    sides: tuple  # ClassRef, ...
