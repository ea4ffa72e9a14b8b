"""What the analysis knows about a value, as immutable facts.

A fact is never a guess: an unknown dim is `Unknown`, an unknown value is `None`. Shapes are tuples
of symbolic dims (`shape_annotations` DimExprs) so `[B, nh, T, hs]` stays readable in messages and
formulas, and is evaluated against declared sizes only when numbers are needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shape_annotations import Unknown, evaluate_integer, same_dim

from . import dtype_rules, shape_ops

# Where a shape came from, most trusted first. An annotation is the user's contract; a shape comment
# is documentation that may have rotted; an inferred shape follows from code we read.
ANNOTATION = "annotation"
COMMENT = "comment"
INFERRED = "inferred"


@dataclass(frozen=True, slots=True)
class TensorFact:
    shape: tuple | None  # tuple of DimExpr, or None when even the rank is unknown
    dtype: str | None = None  # canonical estimator dtype name; None = unknown (use default_dtype)
    origin: str = INFERRED
    framework: str | None = None  # "torch", "numpy", "jax" when known from how it was made

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def with_shape(self, shape) -> "TensorFact":
        return TensorFact(None if shape is None else tuple(shape), self.dtype, INFERRED, self.framework)

    def with_dtype(self, dtype: str | None) -> "TensorFact":
        return TensorFact(self.shape, dtype, self.origin, self.framework)


@dataclass(frozen=True, slots=True)
class DimFact:
    """An integer that is a dimension size (`T = x.size(1)`, `config.n_embd`, `64`)."""

    dim: object  # DimExpr


VALUES_AND_INDICES = ("values", "indices")  # the fields of torch.return_types.max, sort, topk, ...


@dataclass(frozen=True, slots=True)
class SequenceFact:
    """A tuple/list of facts: `x.shape`, `(B, T, C)`, the result of `split`. `names`: the fields of
    a named tuple (torch's `(values, indices)` of `x.max(dim)`), read by attribute as by position."""

    items: tuple
    names: tuple = ()
    # "tuple" or "list" where the program built it as one (a display): `isinstance(dim, tuple)`
    # decides on it; None where not known (a shape, a split's result, arithmetic on sequences).
    # Not compared: two sequences of the same items are the same sizes whatever built them.
    kind: str | None = field(default=None, compare=False)

    def field(self, name: str):
        """`result.values`: the item the named tuple's field holds; None for no such field."""
        return self.items[self.names.index(name)] if name in self.names and len(self.names) == len(self.items) else None


@dataclass(frozen=True, slots=True)
class DTypeFact:
    """A dtype value (`torch.bfloat16`, `x.dtype`); None: the default dtype (`x.dtype` of a tensor
    whose dtype the code never states)."""

    dtype: str | None


@dataclass(frozen=True, slots=True)
class ModuleFact:
    """An nn.Module attribute built in __init__: kind "linear" (weight [out, in]), "conv" (weight
    [out, in, *kernel]) or "preserve"."""

    kind: str
    in_dim: object = None  # None for nn.LazyLinear: read from the input at the call
    out_dim: object = None
    dtype: str | None = None
    spec: object = None  # the site_registry.SiteSpec of a linear or convolution module
    options: object = None  # convolutions.ConvOptions of kind "conv"


@dataclass(frozen=True, slots=True)
class StringFact:
    value: str
    # where a string read from a config file came from (`config.client_secret`): such a value is
    # never echoed into a message (it may be a secret); None for the code's own strings
    origin: str | None = field(default=None, compare=False)

    def derived(self, value: str) -> "StringFact":
        """A string computed from this one (slice, concatenation): its origin stays."""
        return StringFact(value, self.origin)


@dataclass(frozen=True, slots=True)
class ScalarFact:
    """A Python number that is not a dimension (a scale, a probability)."""


# Objects whose attributes are model dimensions: `config.n_embd` is the dim `n_embd`.
CONFIG_NAMES = frozenset({"config", "cfg", "args", "hparams", "hp", "model_args", "conf"})


class ConfigFact:
    """A config object; its attributes are dims named after the attribute."""

    __slots__ = ()


CONFIG = ConfigFact()


class SelfFact:
    __slots__ = ("attributes",)

    def __init__(self, attributes: dict) -> None:
        self.attributes = attributes


@dataclass(frozen=True, slots=True)
class IntFact:
    """A Python integer that is not a size (`0`, `-1`): a whole-model run reads `logits_to_keep=0`
    and `slice(-k, None)` with it; in arithmetic with a tensor it is a number like ScalarFact."""

    value: int


Fact = TensorFact | DimFact | SequenceFact | DTypeFact | ModuleFact | StringFact | ScalarFact | None


def operand_framework(operands) -> str | None:
    """The framework of the first operand known to have one (how a method call or `@` is read)."""
    return next((op.framework for op in operands if type(op) is TensorFact and op.framework), None)


def known_int(fact, sizes) -> int | None:
    """The Python int a fact is known to be: an IntFact's value, or a size the declared sizes give;
    None otherwise."""
    if type(fact) is IntFact:
        return fact.value
    if type(fact) is DimFact:
        return evaluate_integer(fact.dim, sizes)  # Python's int: `//` floors, zero and below included
    return None


def merge_dims(a, b, sizes):
    return a if same_dim(a, b, sizes) else Unknown("branch")


def merge_facts(a: Fact, b: Fact, sizes) -> Fact:
    """What both sides of a branch agree on; disagreement becomes unknown, never a pick."""
    if type(a) is ScalarFact and type(b) is ScalarFact and a is not b:
        # both numbers, but all ScalarFacts compare equal: returning one would pick its value where a
        # run knows the values (whole_model/python/known_floats.py); a fresh one is a number of neither
        return ScalarFact()
    if a == b:
        return a
    if type(a) is TensorFact and type(b) is TensorFact:
        shape = None
        if a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape):
            shape = tuple(merge_dims(x, y, sizes) for x, y in zip(a.shape, b.shape))
        dtype = a.dtype if a.dtype == b.dtype else None
        framework = a.framework if a.framework == b.framework else None
        return TensorFact(shape, dtype, INFERRED, framework)
    if type(a) is DimFact and type(b) is DimFact:
        return DimFact(merge_dims(a.dim, b.dim, sizes))
    if type(a) is SequenceFact and type(b) is SequenceFact and len(a.items) == len(b.items):
        return SequenceFact(tuple(merge_facts(x, y, sizes) for x, y in zip(a.items, b.items)),
                            a.names if a.names == b.names else ())
    return None


def _with_number(dtype, number):
    """The dtype of a tensor combined with a Python number: a number of a higher kind promotes
    (an int tensor times 2.5 is float, a bool tensor plus 1 is int64). A ScalarFact may be a
    float, so with an integer tensor the dtype is unknown; an int keeps any tensor but a bool one."""
    if type(number) is ScalarFact and dtype_rules.is_integral(dtype):
        return None
    if dtype == "bool":
        return None
    return dtype


def elementwise(left, right, sizes):
    """Broadcasting arithmetic: the result has the broadcast shape; a scalar side keeps the other."""
    tensors = [f for f in (left, right) if type(f) is TensorFact]
    if not tensors:
        numbers = (ScalarFact, DimFact, IntFact)
        return ScalarFact() if type(left) in numbers and type(right) in numbers else None
    if len(tensors) == 1:
        tensor = tensors[0]
        other = right if tensor is left else left
        if type(other) in (ScalarFact, DimFact, IntFact):
            return tensor.with_shape(tensor.shape).with_dtype(_with_number(tensor.dtype, other))
        return TensorFact(None, None, framework=tensor.framework)
    shape = shape_ops.broadcast(left.shape, right.shape, sizes)
    dtype = left.dtype if left.dtype == right.dtype else None
    framework = left.framework or right.framework
    return TensorFact(shape, dtype, framework=framework)
