"""Expressions a whole-model run reads beyond the per-file evaluator: conditional expressions and
`and`/`or` decided by known values, tuples with `*rest` spliced, sequence slices and concatenation
(`x.size()[:-1] + (self.nf,)`), indexing of module lists, mappings, registries and output
records. The builtins are read through library/builtin_registry.py.

Each function returns UNHANDLED when the per-file evaluator's reading applies."""

from __future__ import annotations

import libcst as cst

from shape_annotations import Const, evaluate_dim, same_dim

from ...analysis import shape_ops
from ...analysis.facts import (
    DimFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, StringFact, TensorFact
)
from ...analysis.indexing import index_tensor
from ...analysis.interpreter import UNHANDLED
from ...analysis.literals import int_value
from ..python import known_values, output_records, python_values, registries
from ..library import library_values
from ..values.mapping_keys import key_of
from ..python.known_values import is_plain  # noqa: F401 - read here by model_flow and decisions
from ..values.library_objects import WHOLE_SLICE, IntFact, MappingFact, RecordFact, RegistryRef, TorchFunction
from ..values.objects import (
    NONE, BoolFact, ClassRef, Embedding, FunctionRef, ModuleDict, ModuleList, Sequential, known_count
)


def decide_literal(fact):
    """A branch condition's truth from what is known of its value, or None."""
    if type(fact) is BoolFact:
        return fact.value
    if type(fact) is IntFact:
        return fact.value != 0
    if fact is NONE:
        return False
    if type(fact) is StringFact:
        return bool(fact.value)
    if type(fact) in (SelfFact, ModuleFact, ModuleList, ModuleDict, Sequential, Embedding, FunctionRef, ClassRef):
        return True
    return known_values.truth(fact)  # a known tuple, list, dict or iterator


def truth(run, fact):
    """A value's truth when known (`x or default`), else None: what a branch condition decides, and
    also a dim's size and the callables and modules the library idioms make."""
    if type(fact) is DimFact:
        try:
            value = evaluate_dim(fact.dim, run.sizes)
        except Exception:  # noqa: BLE001 - an unbound dim has no known truth
            return None
        return None if value is None else value != 0
    if type(fact) is ScalarFact:  # a float is true when it is not 0.0 (`if config.dropout_p:`, `beta or 32`)
        value = 0.0 if fact is library_values.ZERO_FLOAT else run.floats.value(fact)
        return None if value is None else value != 0
    decided = decide_literal(fact)
    if decided is not None:
        return decided
    if type(fact) in (RegistryRef, TorchFunction, python_values.Partial) or python_values.is_module_value(fact):
        return True
    return None


def if_expression(interp, node: cst.IfExp):
    decision = interp.run.decide(interp, node.test)
    if decision is None:
        return UNHANDLED
    return interp.eval(node.body if decision else node.orelse)


def boolean_operation(interp, node: cst.BooleanOperation):
    """`a or b` is a when a is true, b when a is false; `a and b` the reverse."""
    left = interp.eval(node.left)
    decided = truth(interp.run, left)
    if decided is None:
        interp.eval(node.right)
        return None
    take_left = decided if isinstance(node.operator, cst.Or) else not decided
    return left if take_left else interp.eval(node.right)


def sequence_literal(interp, node):
    """`(*input_shape, -1, self.head_dim)`: starred known sequences spliced (a -1 is the int -1, which
    view/reshape read as the size they solve: arguments.dim_args)."""
    items = []
    for element in node.elements:
        if isinstance(element, cst.StarredElement):
            spliced = interp.listed_items(interp.eval(element.value))  # a list grown by appends too
            if spliced is None:
                return None
            items.extend(spliced)
            if len(items) > MAX_REPEATED_ITEMS:  # `hs = [*hs, *hs]` line after line: unknown, as past a repeat's bound
                return None
        else:
            items.append(interp.eval(element.value))
    return SequenceFact(tuple(items), kind="tuple" if isinstance(node, cst.Tuple) else "list")


def _listed(fact):
    if type(fact) is python_values.GrowingList:
        items = known_values.appended_items(fact)
        return fact if items is None else SequenceFact(items)
    return fact


# The most items a known sequence the running code builds may hold (a repeat, a concatenation, a
# splice): `hs = hs + hs` forty times would hold 2**40; past it the sequence is unknown, so what
# reads its items is unresolved and listed, never a run that exhausts memory.
MAX_REPEATED_ITEMS = 4096


def concatenate(left, right):
    # `[x2, x1] + children` with children a list the code appended to: a new list of its items,
    # when they are known exactly (an append under a loop read once for many is not)
    left, right = (_listed(fact) for fact in (left, right))
    if type(left) is SequenceFact and type(right) is SequenceFact:
        if len(left.items) + len(right.items) > MAX_REPEATED_ITEMS:
            return None
        return SequenceFact(left.items + right.items)
    return UNHANDLED


def repeat_sequence(run, left, right):
    """`[None] * num_hidden_layers`: the items repeated, when the count is known (and bounded)."""
    sequence, count = (left, right) if type(left) is SequenceFact else (right, left)
    if type(sequence) is not SequenceFact or type(count) is not DimFact:
        return UNHANDLED
    try:
        times = evaluate_dim(count.dim, run.sizes)
    except Exception:  # noqa: BLE001 - an unbound count: unknown
        return None
    if times is None or times * len(sequence.items) > MAX_REPEATED_ITEMS:
        return None
    return SequenceFact(sequence.items * times)


def _slice_bounds(interp, node: cst.Slice):
    """The slice when each bound is a literal or a value known to be an int (`splitted[:segments]`
    with `segments = len(shifts)`); None otherwise. Each bound is evaluated once, here."""
    values, known = [], True
    for part in (node.lower, node.upper, node.step):
        value = None if part is None else int_value(part)
        if part is not None and value is None:
            value = known_values.int_of(interp.run, interp.eval(part))
            known = known and value is not None
        values.append(value)
    return slice(*values) if known and values[2] != 0 else None


def subscript(interp, node: cst.Subscript):
    elements = list(node.slice)
    value = _listed(interp.eval(node.value))  # a list grown by appends reads as the items it holds
    run = interp.run
    if type(value) is TensorFact:
        if value.shape is None or shape_ops.has_group(value.shape):
            for element in elements:
                interp.walk(element)
            return value.with_shape(None)
        return index_tensor(interp, value, [_whole_slices(interp, e) for e in elements])
    if len(elements) != 1:
        for element in elements:
            interp.walk(element)
        return None
    part = elements[0].slice
    if type(value) is SequenceFact:
        if isinstance(part, cst.Slice):
            bounds = _slice_bounds(interp, part)
            return SequenceFact(value.items[bounds]) if bounds is not None else None
        index = int_value(part.value)
        if index is None:
            interp.eval(part.value)
            items = value.items  # `head_mask[i]` of `[None] * n`: any index reads the one value
            return items[0] if items and all(item is items[0] or item == items[0] for item in items) else None
        return value.items[index] if -len(value.items) <= index < len(value.items) else None
    if type(value) is StringFact and isinstance(part, cst.Index):  # `op[0]` of a known string: its character
        index = known_values.int_of(run, interp.eval(part.value))
        return value.derived(value.value[index]) if index is not None and -len(value.value) <= index < len(
            value.value) else None
    if type(value) in (ModuleList, Sequential):
        return _module_item(interp, value, part)
    if isinstance(part, cst.Slice) and type(value) is RecordFact:
        present = output_records.present_values(value)  # `sequence_output, pooled_output = outputs[:2]`
        bounds = _slice_bounds(interp, part)
        if present is None or bounds is None:
            return None
        return SequenceFact(tuple(present[bounds]))
    if isinstance(part, cst.Slice):
        interp.walk(part)
        return None
    index_node = part.value
    if type(value) is RecordFact:
        literal = int_value(index_node)
        return output_records.record_item(value, literal if literal is not None else interp.eval(index_node))
    if type(value) is MappingFact:
        key = key_of(run, interp.eval(index_node))
        return None if key is None else value.get(key)
    if type(value) is RegistryRef:
        return registries.lookup(run, interp, value, interp.eval(index_node))
    interp.eval(index_node)
    return None


def _whole_slices(interp, element):
    """An index that is a name bound to `slice(0, None)` reads as `:`; a slice from a name bound to
    0 (`x[:, cache_length:seq + cache_length]`) starts at the start."""
    part = element.slice
    if isinstance(part, cst.Slice) and part.step is None and _plain_name(part.lower):
        lower = interp.eval(part.lower)  # `x[:, -num_logits_to_keep:, :]` with num_logits_to_keep 0
        if type(lower) is IntFact and lower.value == 0:
            return element.with_changes(slice=part.with_changes(lower=None))
    if isinstance(part, cst.Index) and isinstance(part.value, cst.Name) and interp.env.get(part.value.value) is WHOLE_SLICE:
        return element.with_changes(slice=cst.Slice(lower=None, upper=None))
    return element


def _plain_name(node) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Name)


def _module_item(interp, modules, part):
    """`self.h[i]`, `self.layers[:n]`: an item of a list of identical modules is that module, a
    slice up to the list's length is the list."""
    items = modules.items
    repeated = getattr(modules, "count", None) is not None or (items and all(i is items[0] for i in items))
    if isinstance(part, cst.Slice) and part.step is None and type(modules) is ModuleList and _from_start_to_end(interp, part):
        return modules  # `blocks[start_at_layer:stop_at_layer]` with TransformerLens' defaults (0, None)
    if isinstance(part, cst.Slice):
        if part.lower is None and part.step is None and part.upper is not None and type(modules) is ModuleList:
            upper = interp.dim_of(part.upper)
            length = modules.count if modules.count is not None else Const(len(items))
            if upper is not None and same_dim(upper, length, interp.run.sizes):
                return modules
        if type(modules) is ModuleList and all(b is None or known_values.side_effect_free(b) for b in (part.lower, part.upper, part.step)):
            sliced = _sliced_modules(interp, modules, part)  # `self.layers[start:stop]` of known ints
            if sliced is not None:
                return sliced
        interp.walk(part)
        return None
    literal = int_value(part.value)
    if literal is not None and getattr(modules, "count", None) is None and -len(items) <= literal < len(items):
        return items[literal]
    index = interp.eval(part.value)
    if getattr(modules, "count", None) is not None and items and _one_of_copies(interp.run, items[0], index):
        return None
    return items[0] if repeated and items else None


def _one_of_copies(run, item, index) -> bool:
    """`cache.layers[2]` of `[Layer() for _ in range(n)]`, built during the forward: n objects the
    run holds as one, standing for all n while one pass of a loop fills them together (and
    `get_seq_length(layer_idx=0)` reads any of them). Two known indices of it (a loop run pass by
    pass, each layer updating its own) are two objects whose states the shared one cannot hold
    (their updates would pile onto each other): from then on the item is unknown, and what the
    object holds is no figure (attribute_presence: an object of unseen attributes)."""
    known = type(index) is IntFact or type(index) is DimFact and type(index.dim) is Const
    if not known or type(item) is not SelfFact or item in run.paths:
        return False
    value = index.value if type(index) is IntFact else index.dim.value
    first = run.copy_indices.setdefault(item, value)
    if first == value and item not in run.incomplete_objects:
        return False
    run.incomplete_objects.add(item)
    return True


def _sliced_modules(interp, modules: ModuleList, part: cst.Slice):
    """A module list sliced by known ints, as Python slices a list (negative and missing bounds,
    clamping, a step): listed modules, the items in the slice; one module repeated n times, that
    module the slice's length of times — still read by index only when the slice starts at 0 (its
    executions are the first ones; a later slice's layers know their index no more)."""
    run = interp.run
    length = len(modules.items) if modules.count is None else known_count(modules.count, run.sizes)
    bounds = []
    for bound in (part.lower, part.upper, part.step):
        fact = NONE if bound is None else interp.eval(bound)
        value = None if fact is NONE else known_values.int_of(run, fact)
        if fact is not NONE and value is None:
            return None
        bounds.append(value)
    if length is None or bounds[2] == 0:
        return None
    picked = range(length)[slice(*bounds)]
    if modules.count is None:
        return ModuleList(tuple(modules.items[i] for i in picked))
    if not picked:
        return ModuleList(())
    index = modules.index if picked.start == 0 and picked.step == 1 else None
    return ModuleList(modules.items, Const(len(picked)), index)


def _from_start_to_end(interp, part: cst.Slice) -> bool:
    """Bounds that are absent, None, or 0 (lower) — only names and literals are evaluated here."""
    bounds = []
    for bound in (part.lower, part.upper):
        if bound is None:
            bounds.append(NONE)
        elif is_plain(bound):
            bounds.append(interp.eval(bound))
        else:
            return False
    lower, upper = bounds
    return (lower is NONE or type(lower) is IntFact and lower.value == 0) and upper is NONE


def enumerated(node, env):
    """The iterable of `enumerate(x)` (x), or None."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "enumerate" \
            and "enumerate" not in env and len(node.args) == 1 and not node.args[0].star and node.args[0].keyword is None:
        return node.args[0].value
    return None


def dict_literal(interp, node: cst.Dict):
    """`{"config": self.config, ...}`: a known mapping (`f(**mask_kwargs)`), its keys strings,
    numbers, bools or tuples of them (`{(is_sliding, is_loop): LayerClass, ...}`)."""
    items = []
    known = True
    for element in node.elements:
        if not isinstance(element, cst.DictElement):
            interp.walk(element)
            known = False
            continue
        key = key_of(interp.run, interp.eval(element.key))
        value = interp.eval(element.value)
        if key is not None:
            items.append((key, value))
        else:
            known = False
    return MappingFact(tuple(dict(items).items())) if known else None  # a repeated key: its last value
