"""Values of library-style model code (Hugging Face transformers and code written like it) that a
whole-model run follows: config objects read from a `config.json`, registries of functions or
classes keyed by strings, output records (`BaseModelOutputWithPast(last_hidden_state=...)`),
torch functions held in variables, `**kwargs` dictionaries and `super()`."""

from __future__ import annotations

from dataclasses import dataclass

from ...analysis.facts import IntFact  # noqa: F401 - re-exported: the values of library-style code


@dataclass(frozen=True)
class MappingFact:
    """A dict whose string keys and values are known (`config.rope_parameters`, `**kwargs`)."""

    items: tuple  # ((key, fact), ...)

    def get(self, key, default=None):
        return dict(self.items).get(key, default)


@dataclass(frozen=True)
class RegistryRef:
    """A module-level registry object (`ALL_ATTENTION_FUNCTIONS = AttentionInterface()`,
    `ACT2FN = ClassInstantier(ACT2CLS)`): string keys map to functions or classes written as a dict
    literal — the class's `_global_mapping`, or the dict the object was built from."""

    source: object  # SourceFile where the object is built
    name: str
    cls: object  # cst.ClassDef of its class, or None when the class is not in the tree
    mapping: tuple  # ((key, value expression node, SourceFile), ...)
    instantiates: bool  # the class's __getitem__ builds what it holds (`cls(**kwargs)`)


@dataclass(eq=False)
class RecordFact:
    """An instance of a dataclass without its own `__init__` (an HF `ModelOutput`): its fields in
    declaration order with their facts. `record[0]` is the first field that is not None, as
    `ModelOutput.to_tuple()` reads it."""

    class_name: str
    fields: list  # [(name, fact)]
    model_output: bool  # indexed as HF ModelOutput (None fields skipped)

    def attribute(self, name: str):
        return dict(self.fields).get(name)


@dataclass(frozen=True)
class TorchFunction:
    """A torch function used as a value (`self.act = nn.functional.gelu`)."""

    name: str  # canonical dotted name


@dataclass(frozen=True)
class SuperRef:
    """`super()` inside `method`, bound to `self_fact`."""

    self_fact: object
    method: object  # cst.FunctionDef running when super() was called


@dataclass(frozen=True)
class InstanceDict:
    """`obj.__dict__` of an object the run knows: a view of the object's own attributes (reading or
    popping through it reads or changes the object itself), library/object_attributes.py."""

    owner: object  # the SelfFact, or the root config (CONFIG)


class WholeSlice:
    """`slice(0, None)` as a value: indexing with it keeps the dim (`x[:, keep, :]`)."""

    __slots__ = ()


WHOLE_SLICE = WholeSlice()


@dataclass(frozen=True)
class TreeSpec:
    """The structure `torch.utils._pytree.tree_flatten` returns beside the leaves: a leaf, or a
    tuple/list (`names`: a named tuple's fields) or dict (`keys`) node over its children's specs."""

    kind: str  # "leaf" | "sequence" | "mapping"
    children: tuple = ()
    context: tuple = ()  # a sequence's names, a mapping's keys in their order

    @property
    def leaves(self) -> int:
        return 1 if self.kind == "leaf" else sum(child.leaves for child in self.children)
