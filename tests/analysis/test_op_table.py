"""The op table's invariants (analysis/op_table.py): one entry per name, every kind and rule one the
memory layer interprets, every entry a shape rule for each name it gives, except the few listed
here (the memory layer or the whole-model run reads them where another reading made the tensor),
other names resolving to an entry, entries of other frameworks without a view kind or saved rule,
and every shape rule a reader looks up (op_table.METHODS / FUNCTIONS) an entry's, none kept in a
table of a rule module. The rows that prove each entry against torch live with their consumer:
tests/whole_model/test_saved_table.py (a row per saved rule, against autograd; its meta-test fails
on an entry without one), tests/whole_model/test_storage_layouts.py (views against torch's
strides) and tests/analysis/test_transfer_tables.py (a row per shape rule)."""

from __future__ import annotations

from collections import Counter

from tensorcost_lint.analysis import complex_views, einx_ops, functional_ops, linear_solves, op_table, \
    pointwise_ops, selection_ops, tensor_functions, tensor_methods, window_pooling
from tensorcost_lint.analysis.arguments import CallArgs
from tensorcost_lint.analysis.facts import TensorFact
from tensorcost_lint.analysis.op_table import OPS, Op
from tensorcost_lint.whole_model.memory import saved_table, storage
from tensorcost_lint.whole_model.python import gradient_flow, python_values

VIEW_KINDS = {op_table.FRESH, op_table.VIEW, op_table.RESHAPE, op_table.SAME_IF_DTYPE, op_table.PIECES,
              op_table.ALIAS, op_table.CONTIGUOUS}
SAVED_RULES = {op_table.INPUT, op_table.RESULT, op_table.INPUT_RESULT, op_table.MASK, op_table.CONDITION,
               op_table.INPUT_INDEX, op_table.INDEX, op_table.NOTHING, op_table.INDICES, op_table.EXTREMUM,
               op_table.INPUT_BUFFER, op_table.BY_COUNT, op_table.BATCH_STATISTICS}
# names of entries with no shape rule: shrink this when one gets its rule
WITHOUT_SHAPE = {"unflatten", "torch.unflatten", "torch.detach", "clip", "torch.clip", "new_tensor", "get_device",
                 "torch.arange", "torch.tensor", "torch.as_tensor"}
RULE_MODULES = (tensor_methods, tensor_functions, pointwise_ops, selection_ops, functional_ops, complex_views,
                linear_solves, window_pooling, einx_ops)


def _names(op: Op) -> list[str]:
    return [*([op.method] if op.method else []), *op.functions]


def test_one_entry_per_name():
    counts = Counter(name for op in OPS for name in _names(op))
    assert [name for name, count in counts.items() if count > 1] == []


def test_every_kind_and_rule_is_one_the_memory_layer_reads():
    for op in OPS:
        assert op.view in VIEW_KINDS, op
        assert op.saved is None or op.saved in SAVED_RULES, op
        assert op.method is not None or not op.torch, f"{op.name}: a function entry names itself"


def test_every_entry_says_something():
    """A shape rule, or something the memory layer or the whole-model run reads."""
    for op in OPS:
        assert op.shape is not None or op.view != op_table.FRESH or op.saved or op.cuts_gradient or op.metadata \
            or op.constructor, op


def test_an_entry_of_another_framework_has_no_view_kind_or_saved_rule():
    """numpy, jax, einops and einx: the memory layer reads torch's ops only."""
    for op in OPS:
        if not op.name.startswith("torch.") and op.method is None:
            assert (op.view, op.saved, op.reads_as, op.metadata) == (op_table.FRESH, None, None, False), op


def test_another_name_reads_as_an_entry_of_the_same_kind():
    entries = {op.name: op for op in OPS}
    for op in OPS:
        if op.reads_as is not None:
            assert entries[op.reads_as].view == op.view, op


def test_every_entry_has_a_shape_rule_but_the_listed():
    without = set()
    for op in OPS:
        method, functions = op_table.shape_rules(op)
        without |= {op.method} if op.method is not None and method is None else set()
        without |= set(op.functions) - set(functions)
    assert without == WITHOUT_SHAPE


def test_the_whole_model_run_reads_the_table():
    assert gradient_flow._FRESH_METHODS is op_table.GRADIENT_CUT_METHODS
    assert gradient_flow._FRESH_FUNCTIONS is op_table.GRADIENT_CUT_FUNCTIONS
    assert op_table.GRADIENT_CUT_FUNCTIONS <= op_table.CONSTRUCTORS, "a function cutting the gradient makes a tensor"
    assert python_values._METADATA_METHODS is op_table.METADATA_METHODS
    assert saved_table.METHODS is op_table.SAVED_METHODS and saved_table.FUNCTIONS is op_table.SAVED_FUNCTIONS
    assert saved_table.MODULES is op_table.MODULES_SAVED
    assert storage._FUNCTIONS is op_table.VIEW_FUNCTIONS
    assert set(storage._FUNCTIONS.values()) <= storage._VIEWS | storage._RESHAPES | storage._PIECES
    views = storage._VIEWS | storage._RESHAPES | storage._SAME_IF_DTYPE | storage._PIECES | storage._ALIASES \
        | storage._CONTIGUOUS
    assert views == {op.name for op in OPS if op.view != op_table.FRESH}


def test_every_rule_is_one_the_rules_read():
    for op in OPS:
        if op.method is not None:
            assert op.shape is None or callable(op.shape), f"{op.name}: a method's rule is a transfer function"
        elif isinstance(op.shape, str):
            assert op.shape in op_table.METHODS, f"{op.name} reads as a method with no rule: {op.shape}"
        if op.torch_shape is not op_table.AS_METHOD:
            assert op.torch and op.method is not None, f"{op.name}: torch_shape without torch.NAME"
            assert op.torch_shape is None or callable(op.torch_shape), op


def test_every_shape_rule_is_an_entrys():
    """Every rule a reader looks up comes from one place, an entry (its name, or `torch.NAME`)."""
    assert op_table.METHODS == {op.method: op.shape for op in OPS if op.method is not None and op.shape is not None}
    functions = [name for op in OPS for name in op_table.shape_rules(op)[1]]
    assert sorted(op_table.FUNCTIONS) == sorted(functions)


def test_the_rule_modules_hold_rules_not_tables_of_names():
    """A table of rules by name beside the op table would be a second place to look an op up."""
    for module in RULE_MODULES:
        tables = [name for name, value in vars(module).items() if isinstance(value, dict) and value
                  and all(isinstance(key, str) for key in value) and all(callable(rule) for rule in value.values())]
        assert tables == [], f"{module.__name__}: {tables}"


def test_a_function_read_as_its_method_reads_the_rule_when_called(monkeypatch):
    """`torch.t(x)` is `x.t()` whatever METHODS holds when it is called (tests/conformance swaps a rule)."""
    class Interp:
        def eval(self, node):
            return TensorFact(None, "float32") if node == "x" else None

    monkeypatch.setitem(op_table.METHODS, "t", lambda interp, receiver, args: "swapped")
    assert op_table.FUNCTIONS["torch.t"](Interp(), CallArgs(["x"], {}, False)) == "swapped"
