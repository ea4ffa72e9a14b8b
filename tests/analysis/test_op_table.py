"""The op table's invariants (analysis/op_table.py): one entry per name, every kind and rule one the
memory layer interprets, every entry an op whose result the shape rules know, except the few
listed here (the memory layer reads them where another reading made the tensor), and the shape
rules (op_table.METHODS / FUNCTIONS) the table's entries joined with the rows not moved onto an
entry yet, which may only shrink. The rows that
prove each entry against torch live with their consumer: tests/whole_model/test_saved_table.py (a
row per saved rule, against autograd; its meta-test fails on an entry without one),
tests/whole_model/test_storage_layouts.py (views against torch's strides) and
tests/analysis/test_transfer_tables.py (a row per shape rule)."""

from __future__ import annotations

from collections import Counter

from tensorcost_lint.analysis import op_table, tensor_functions, tensor_methods
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
WITHOUT_SHAPE = {"unflatten", "torch.unflatten", "torch.detach", "clip", "torch.clip", "new_tensor", "get_device"}
# shape rules of ops with no entry yet (tensor_methods.REMAINING_METHODS, tensor_functions.REMAINING_FUNCTIONS
# and the functions read as a method, tensor_functions.METHOD_FUNCTIONS): lower these as ops move onto entries
REMAINING_METHODS_AT_MOST = 237
REMAINING_FUNCTIONS_AT_MOST = 138 + 127


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


def test_an_entry_says_something_beyond_its_shape():
    for op in OPS:
        assert op.view != op_table.FRESH or op.saved or op.cuts_gradient or op.metadata, op


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


def test_the_shape_rules_are_the_tables_and_the_remaining_rows():
    """Every rule comes from one place: an entry, or a row of an op with no entry yet."""
    table_methods = {op.method: op.shape for op in OPS if op.method is not None and op.shape is not None}
    assert not set(table_methods) & set(tensor_methods.REMAINING_METHODS)
    assert op_table.METHODS == {**tensor_methods.REMAINING_METHODS, **table_methods}
    table_functions = {name for op in OPS for name in op_table.shape_rules(op)[1]}
    remaining = {*tensor_functions.REMAINING_FUNCTIONS, *tensor_functions.METHOD_FUNCTIONS}
    assert not table_functions & remaining
    assert set(op_table.FUNCTIONS) == table_functions | remaining
    names = {name for op in OPS for name in _names(op)}
    assert not names & {*tensor_methods.REMAINING_METHODS, *remaining}, "an entry's op has its rule on the entry"


def test_the_remaining_rows_only_shrink():
    assert len(tensor_methods.REMAINING_METHODS) <= REMAINING_METHODS_AT_MOST
    assert len(tensor_functions.REMAINING_FUNCTIONS) + len(tensor_functions.METHOD_FUNCTIONS) \
        <= REMAINING_FUNCTIONS_AT_MOST


def test_a_function_read_as_its_method_reads_the_rule_when_called(monkeypatch):
    """`torch.t(x)` is `x.t()` whatever METHODS holds when it is called (tests/conformance swaps a rule)."""
    class Interp:
        def eval(self, node):
            return TensorFact(None, "float32") if node == "x" else None

    monkeypatch.setitem(op_table.METHODS, "t", lambda interp, receiver, args: "swapped")
    assert op_table.FUNCTIONS["torch.t"](Interp(), CallArgs(["x"], {}, False)) == "swapped"
