"""Conformance of the op tables with torch's own OpInfo and ModuleInfo databases.

Each sample input of an OpInfo (`torch.testing._internal.common_methods_invocations.op_db`) whose
name maps to an entry of our tables is written as source text (`torch.X(t0, 2, dim=-1)`, tensors as
names bound to facts of their concrete shapes and dtypes, the rest as Python literals). The same
text is evaluated twice: by our Evaluator on the facts, and by Python on the sample's tensors. The
two results are compared on shape and dtype:

- agree: our rule gives the shape and dtype torch gives;
- unknown: our rule gives no shape (or no dtype): not covered, never a failure;
- skipped: the sample cannot be written as literals, or torch rejects the call as written;
- disagree: our rule gives a known shape or dtype that is not torch's, or raises: a bug.

torch is imported only here (the harness); the analysis never imports it.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field

import libcst as cst

from shape_annotations import Const, ShapeError, evaluate_dim
from tensorcost_lint.analysis import op_table
from tensorcost_lint.analysis.context import FileSettings, Recorder, UnitContext
from tensorcost_lint.analysis.evaluator import Evaluator
from tensorcost_lint.analysis.facts import DimFact, IntFact, ScalarFact, SequenceFact, TensorFact
from tensorcost_lint.analysis.imports import import_table_from_ast
from tensorcost_lint.analysis.site_registry import FUNCTIONS as SITE_FUNCTIONS, METHODS as SITE_METHODS

HEADER = "import torch\nimport torch.nn.functional as F\n"
AGREE, UNKNOWN, SKIPPED, DISAGREE = "agree", "unknown", "skipped", "disagree"
OUTCOMES = (AGREE, UNKNOWN, SKIPPED, DISAGREE)
# Samples per op and dtype: the first ones the OpInfo yields (its order is fixed), so runs repeat.
FLOAT32_SAMPLES = 6
OTHER_DTYPE_SAMPLES = 2
OTHER_DTYPES = ("float64", "bfloat16", "int64", "int32", "bool", "complex64")


class Unwritable(Exception):
    """A sample argument that is not a tensor nor a Python literal (a generator, a device...)."""


@dataclass
class Tally:
    """The outcomes of one op (or module) entry, and the first few disagreements, written out."""

    name: str
    entries: tuple = ()  # the table entries it maps to: ("function", "torch.cat"), ("method", "cat")
    base: str = ""  # the op's name without its variant (`div` of `div.floor_rounding`)
    counts: dict = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    failures: list = field(default_factory=list)

    def add(self, outcome: str, detail: str = "") -> None:
        self.counts[outcome] += 1
        if outcome == DISAGREE and len(self.failures) < 5:
            self.failures.append(detail)

    @property
    def covered(self) -> bool:
        """Every sample that could be written agrees, none is unknown or disagrees."""
        return self.counts[AGREE] > 0 and self.counts[UNKNOWN] == 0 and self.counts[DISAGREE] == 0

    @property
    def partly_covered(self) -> bool:
        return self.counts[AGREE] > 0 and self.counts[DISAGREE] == 0


# -- mapping an OpInfo to our tables ------------------------------------------------------------
def _torch_has(dotted: str) -> bool:
    import torch

    value = torch
    for part in dotted.split(".")[1:]:
        value = getattr(value, part, None)
        if value is None:
            return False
    return callable(value)


def table_entries(op) -> tuple:
    """The entries of our tables an OpInfo exercises: `torch.NAME` (so `nn.functional.gelu` is
    `torch.nn.functional.gelu`) in the function tables, `NAME` in the method tables when the op has
    a method variant, `NAME_` when it has an in-place one; its aliases the same way."""
    names = [op.name, *(alias.name for alias in op.aliases)]
    functions = {**op_table.FUNCTIONS, **dict.fromkeys(SITE_FUNCTIONS)}
    methods = {**op_table.METHODS, **dict.fromkeys(spec.rsplit(".", 1)[-1] for spec in SITE_METHODS)}
    entries = []
    for name in names:
        if name.startswith("_") or name.startswith("torch."):
            continue
        qualified = f"torch.{name}"
        if qualified in functions and _torch_has(qualified) and op.op is not None:
            entries.append(("function", qualified))
        if "." not in name and name in methods and op.method_variant is not None:
            entries.append(("method", name))
        if "." not in name and f"{name}_" in methods and op.inplace_variant is not None:
            entries.append(("method", f"{name}_"))
    return tuple(dict.fromkeys(entries))


# -- writing a sample as source -----------------------------------------------------------------
def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def literal(value, tensors: dict) -> str:
    """`value` as source text; a tensor becomes a fresh name bound in `tensors`."""
    import torch

    if isinstance(value, torch.Tensor):
        name = f"t{len(tensors)}"
        tensors[name] = value
        return name
    if isinstance(value, torch.dtype):
        return f"torch.{dtype_name(value)}"
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, (list, tuple)):  # torch.Size is a tuple
        items = [literal(item, tensors) for item in value]
        if isinstance(value, list):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    raise Unwritable(type(value).__name__)


def call_source(form: str, name: str, receiver, args, kwargs, tensors: dict) -> str:
    """`torch.cat([t0, t1], 1)` or `t0.transpose(0, 1)`."""
    head = literal(receiver, tensors)
    rest = [literal(a, tensors) for a in args] + [f"{k}={literal(v, tensors)}" for k, v in kwargs.items()]
    if form == "method":
        return f"{head}.{name}({', '.join(rest)})"
    return f"{name}({', '.join([head, *rest])})"


# -- the two sides --------------------------------------------------------------------------------
def fact_of(tensor) -> TensorFact:
    return TensorFact(tuple(Const(int(n)) for n in tensor.shape), dtype_name(tensor.dtype), framework="torch")


def evaluator(env: dict, source: str):
    """A per-file Evaluator over `source`, with `env` bound; returns it and the parsed module."""
    module = cst.parse_module(source)
    settings = FileSettings("conformance.py", import_table_from_ast(ast.parse(source)), {}, "float32", False, ())
    return Evaluator(UnitContext(settings, Recorder(), module), env), module


def ours(expression: str, tensors: dict):
    source = HEADER + expression + "\n"
    interp, module = evaluator({name: fact_of(t) for name, t in tensors.items()}, source)
    return interp.eval(module.body[-1].body[0].value)


def theirs(expression: str, tensors: dict):
    import torch

    return eval(expression, {"torch": torch, "F": torch.nn.functional}, dict(tensors))  # noqa: S307


def _size(dim) -> int | None:
    if type(dim) is Const:
        return dim.value  # a 0-length dim is a real size here, which evaluate_dim refuses
    try:
        return evaluate_dim(dim, {})
    except ShapeError:
        return None


def compare(fact, result) -> tuple[str, str]:
    """(outcome, what differs) of our fact against torch's result."""
    import torch

    if isinstance(result, torch.Tensor):
        if type(fact) is not TensorFact:
            return (UNKNOWN, "") if fact is None else (DISAGREE, f"{type(fact).__name__} for a tensor")
        if fact.shape is None:
            return UNKNOWN, ""
        shape = tuple(_size(d) for d in fact.shape)
        expected = tuple(result.shape)
        if len(shape) != len(expected) or any(s is not None and s != e for s, e in zip(shape, expected)):
            return DISAGREE, f"shape {shape} for {expected}"
        if fact.dtype is not None and fact.dtype != dtype_name(result.dtype):
            return DISAGREE, f"dtype {fact.dtype} for {dtype_name(result.dtype)}"
        return (UNKNOWN, "") if None in shape or fact.dtype is None else (AGREE, "")
    if isinstance(result, (bool, int, float)):
        if fact is None:
            return UNKNOWN, ""
        if type(fact) in (ScalarFact, IntFact):
            return AGREE, ""
        if type(fact) is DimFact:
            size = _size(fact.dim)
            return (AGREE, "") if size == result else (DISAGREE, f"dim {size} for {result}")
        return DISAGREE, f"{type(fact).__name__} for a number"
    if isinstance(result, (tuple, list)):
        if fact is None:
            return UNKNOWN, ""
        if type(fact) is not SequenceFact or len(fact.items) != len(result):
            return DISAGREE, f"{type(fact).__name__} for a sequence of {len(result)}"
        outcomes = [compare(f, r) for f, r in zip(fact.items, result)]
        for outcome in (DISAGREE, UNKNOWN):
            found = [detail for o, detail in outcomes if o == outcome]
            if found:
                return outcome, found[0]
        return AGREE, ""
    return UNKNOWN, ""  # a result we have no fact kind for (a string, a generator)


def check(expression: str, tensors: dict) -> tuple[str, str]:
    """Evaluate `expression` both ways; a call torch rejects is skipped (an in-place op whose result
    cannot hold the broadcast, a sample meant for another variant)."""
    try:
        result = theirs(expression, tensors)
    except Exception:  # noqa: BLE001 - any refusal by torch means the sample does not apply
        return SKIPPED, ""
    try:
        fact = ours(expression, tensors)
    except Exception as error:  # noqa: BLE001 - an internal error of ours is a failure to report
        return DISAGREE, f"{expression}: raised {type(error).__name__}: {error}"
    outcome, detail = compare(fact, result)
    if not detail:
        return outcome, ""
    operands = ", ".join(f"{n}: {list(t.shape)} {dtype_name(t.dtype)}" for n, t in tensors.items())
    return outcome, f"{expression} ({operands}): {detail}"


# -- running the database -----------------------------------------------------------------------
def _dtypes(op) -> list:
    import torch

    supported = {dtype_name(d) for d in op.supported_dtypes("cpu")}
    chosen = [name for name in ("float32", *OTHER_DTYPES) if name in supported]
    return [getattr(torch, name) for name in chosen]


def _samples(op, dtype, limit: int):
    import torch

    torch.manual_seed(0)  # values are random; shapes and arguments are fixed by the OpInfo
    try:
        # the OpInfo's own sample function: `op.sample_inputs` wraps it in a TrackedInputIter whose
        # every step crawls the stack with inspect.stack(), 5x slower under pytest's deep stacks
        generator = op.sample_inputs_func(op, "cpu", dtype, False)
        return [sample for _, sample in zip(range(limit), generator)]
    except Exception:  # noqa: BLE001 - an OpInfo that cannot build samples on CPU here
        return []


def run_op(op, entries) -> Tally:
    tally = Tally(_op_name(op), entries, base=op.name)
    for index, dtype in enumerate(_dtypes(op)):
        for sample in _samples(op, dtype, FLOAT32_SAMPLES if index == 0 else OTHER_DTYPE_SAMPLES):
            for form, entry in entries:
                tensors: dict = {}
                try:
                    expression = call_source(form, entry, sample.input, sample.args, sample.kwargs, tensors)
                except Unwritable:
                    tally.add(SKIPPED)
                    continue
                tally.add(*check(expression, tensors))
    return tally


def op_tallies() -> list:
    from torch.testing._internal.common_methods_invocations import op_db

    tallies = []
    for op in op_db:
        entries = table_entries(op)
        tallies.append(run_op(op, entries) if entries else Tally(_op_name(op), base=op.name))
    return tallies


def _op_name(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
