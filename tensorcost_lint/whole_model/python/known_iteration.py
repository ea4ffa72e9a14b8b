"""Loops and comprehensions over sequences the run knows exactly (known_values.py): a `for` over
a known tuple, list, dict or iterator runs its body item by item (`for ind, (layer_type, …) in
enumerate(zip(*layer_variables))`), and `[f(x) for x in seq]`, `(… for …)` and `{k: v for …}`
evaluate their element once per item. Loops and comprehensions over `range(n)` keep their repeat
reading (a count, the body once)."""

from __future__ import annotations

import libcst as cst

from ...analysis import op_table
from ...analysis.facts import SequenceFact, TensorFact
from ...analysis.interpreter import UNHANDLED
from . import class_members, known_values, python_values
from ..values import unrolled_loops
from .known_values import MAX_ITEMS, IteratorFact, index_pairs, int_fact, is_plain, is_range_call, items_of
from ..values.library_objects import MappingFact
from ..values.mapping_keys import key_of
from ..values.objects import ModuleList, Repeat, known_count, modules_iterated


def comprehension(interp, node):
    """`[f(x) for x in seq]`, `(… for …)` and `{k: v for k, v in d.items()}` over known sequences:
    the element once per item, with the loop's names bound to it; `if` clauses decided per item.
    A comprehension over `range(n)` keeps the repeat reading (UNHANDLED) unless it only builds data.
    When an iterable or a clause is not known, the element is walked with its names unknown and the
    value is None."""
    loops = []
    loop = node.for_in
    while loop is not None:
        loops.append(loop)
        loop = loop.inner_for_in
    if any(getattr(loop, "asynchronous", None) for loop in loops):
        return UNHANDLED
    if is_range_call(loops[0].iter, interp.env) and not _builds_data(interp, node, loops):
        return UNHANDLED
    if len(loops) == 1 and not loops[0].ifs and type(loops[0].target) is cst.Name and is_plain(loops[0].iter) \
            and not isinstance(node, cst.DictComp):
        repeated = modules_iterated(interp.eval(loops[0].iter))
        if type(repeated) is ModuleList and repeated.count is not None:
            return _over_repeated(interp, node, loops[0], repeated)
    results: list = []
    known = _expand(interp, node, loops, interp.env, results)
    if not known:
        return None
    if isinstance(node, cst.DictComp):
        keys = [key_of(interp.run, key) for key, _ in results]
        if None in keys:
            return None
        return MappingFact(tuple(dict((key, value) for key, (_, value) in zip(keys, results)).items()))
    return SequenceFact(tuple(results))


def _expand(interp, node, loops, env, results) -> bool:
    loop, rest = loops[0], loops[1:]
    scope = interp.with_env(dict(env))
    items = items_of(class_members.protocol_items(scope, scope.eval(loop.iter)))
    if items is None or len(items) > MAX_ITEMS:
        _walk_unknown(interp, node, loops, env)
        return False
    for item in items:
        inner = dict(env)
        bind_target(inner, loop.target, item)
        decided = True
        for clause in loop.ifs:
            truth_value = interp.run.decide(interp.with_env(inner), clause.test)
            if truth_value is None:
                _walk_unknown(interp, node, loops, env)
                return False
            decided = decided and truth_value
        if not decided:
            continue
        if rest:
            if not _expand(interp, node, rest, inner, results):
                return False
            continue
        element = interp.with_env(inner)
        if isinstance(node, cst.DictComp):
            results.append((element.eval(node.key), element.eval(node.value)))
        else:
            results.append(element.eval(node.elt))
        if len(results) > MAX_ITEMS:
            return False
    return True


def _walk_unknown(interp, node, loops, env) -> None:
    """The element's sites, with every loop name unknown."""
    unknown = dict(env)
    for loop in loops:
        for name in python_values.target_names(loop.target):
            unknown[name] = None
    scope = interp.with_env(unknown)
    for loop in loops:
        for clause in loop.ifs:
            scope.walk(clause.test)
    if isinstance(node, cst.DictComp):
        scope.walk(node.key)
        scope.walk(node.value)
    else:
        scope.walk(node.elt)


def bind_target(env: dict, target, fact) -> None:
    """`for k, (a, b) in …`: names bound from a known tuple, unknown where it does not fit."""
    if isinstance(target, cst.Name):
        env[target.value] = fact
        return
    if isinstance(target, (cst.Tuple, cst.List)):
        elements = target.elements
        items = items_of(fact)
        if items is None or len(items) != len(elements) or any(isinstance(e, cst.StarredElement) for e in elements):
            for name in python_values.target_names(target):
                env[name] = None
            return
        for element, item in zip(elements, items):
            bind_target(env, element.value, item)
        return
    for name in python_values.target_names(target):
        env[name] = None


def loop_items(iterated, node: cst.For, enumerated: bool, env, building: bool = False):
    """The items a `for` loop runs over, when the iterable is a known tuple, list, dict or iterator
    (not a module list, whose loops python_values reads, nor `range(n)` in a forward, which
    repeats its body): with their known index under `enumerate`. None otherwise. A constructor's
    `range(n)` of known n runs each index in turn: what it builds may depend on the index
    (`if i % 2 == 0: layers.append(...)`), and building costs nothing we count."""
    if type(iterated) not in (SequenceFact, IteratorFact, MappingFact) or \
            (not building and is_range_call(node.iter, env)):
        return None
    items = items_of(iterated)
    if items is None or len(items) > unrolled_loops.MAX_UNROLLED:
        return None
    if type(iterated) is IteratorFact:
        iterated.position = len(iterated.items)  # the loop exhausts it
    if enumerated:
        items = index_pairs(items)
    return items


def indexed_items(node: cst.For, element, count, sizes):
    """A loop whose body reads its index, run index by index as Python runs it when the count is a
    known number: `for i, layer in enumerate(self.layers)` over identical modules
    (`mask_by_type[config.layer_types[i]]`) with `element` the module, and `for i in range(n)`
    (`self.attentions[i](x)` over a list built by appends) with `element` None. None where the
    body does not read the index (the loop repeats its body, the count a factor) or the count is
    not a known number."""
    target = node.target
    if element is not None:
        if not (isinstance(target, cst.Tuple) and len(target.elements) == 2
                and isinstance(target.elements[0].value, cst.Name)):
            return None
        index = target.elements[0].value.value
    elif isinstance(target, cst.Name):
        index = target.value
    else:
        return None
    if not _reads_name(node.body, index):
        return None
    trips = known_count(count, sizes)
    if trips is None or not 0 < trips <= unrolled_loops.MAX_UNROLLED:
        return None
    if element is None:
        return tuple(int_fact(i) for i in range(trips))
    return index_pairs((element,) * trips)


def range_of(interp, node):
    """`range(start, stop[, step])` of known ints in a forward: the ints it yields, each one run in
    turn as Python runs the loop (`for loop_idx in range(1, config.loop_num_passes)`); None when an
    argument is not a known int or there are more than MAX_UNROLLED. `range(n)` keeps its repeat
    reading (model_flow)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range"
            and 2 <= len(node.args) <= 3 and "range" not in interp.env
            and all(arg.keyword is None and not arg.star and is_plain(arg.value) for arg in node.args)):
        return None
    values = [known_values.int_of(interp.run, interp.eval(arg.value)) for arg in node.args]
    if None in values or (len(values) == 3 and values[2] == 0):
        return None
    indices = range(*values)
    return None if len(indices) > unrolled_loops.MAX_UNROLLED else tuple(known_values.int_fact(i) for i in indices)


def _reads_name(body, name: str) -> bool:
    """Whether `body` reads the loop index `name`. A nested `for` that binds the same name (`for _ in
    range(2)` inside `for _ in range(2)`) reads only its iterable before rebinding it: its body reads
    its own index, so forty such loops nested repeat one pass each, not 2**40 passes index by index."""
    pending = [body]
    while pending:
        current = pending.pop()
        if type(current) is cst.Name and current.value == name:
            return True
        if type(current) is cst.For and type(current.target) is cst.Name and current.target.value == name:
            pending.append(current.iter)
            continue
        pending.extend(current.children)
    return False


# Builtins that compute a value from known ones and run no model code.
_DATA_BUILTINS = frozenset({"isinstance", "len", "tuple", "list", "dict", "int", "bool", "str", "range", "zip",
                            "enumerate", "min", "max", "abs", "sorted", "reversed"})
_DATA_METHODS = frozenset({"items", "keys", "values", "get", "copy", "startswith", "endswith"})  # of dicts, strings


def _builds_data(interp, node, loops) -> bool:
    """An element (and clauses) that only compute Python data: no call but of the builtins, the
    dict and string methods above and torch's tensor constructors (`[torch.zeros(*shape) for i in
    range(5)]` is five tensors; a call of anything else may build a module or record a site), no `@`."""
    imports = interp.ctx.settings.imports
    parts = [*(clause.test for loop in loops for clause in loop.ifs),
             *((node.key, node.value) if isinstance(node, cst.DictComp) else (node.elt,))]
    pending = list(parts)
    while pending:
        current = pending.pop()
        if isinstance(current, cst.Call) and not (
                isinstance(current.func, cst.Name) and current.func.value in _DATA_BUILTINS
                or isinstance(current.func, cst.Attribute) and current.func.attr.value in _DATA_METHODS
                or imports.resolve(current.func) in op_table.CONSTRUCTORS):
            return False
        if isinstance(current, (cst.MatrixMultiply, cst.Lambda, cst.Await, cst.Yield)):
            return False
        pending.extend(current.children)
    return True


def reshaped_carry(before: dict, after: dict, sizes) -> str | None:
    """The first name a loop pass rebinds to a tensor of another shape than it found (a buffer grown by
    `torch.cat`), or None: repeating one pass is then no reading of the loop."""
    for name, old in before.items():
        new = after.get(name)
        if type(old) is not TensorFact or type(new) is not TensorFact or old is new:
            continue
        if old.shape is None or new.shape is None:
            continue
        if len(old.shape) != len(new.shape) or not all(_same_size(a, b, sizes) for a, b in zip(old.shape, new.shape)):
            return name
    return None


def _same_size(a, b, sizes) -> bool:
    if a == b:
        return True
    left, right = known_count(a, sizes), known_count(b, sizes)
    return left is not None and left == right


def _over_repeated(interp, node, loop, modules):
    """`[branch(x) for branch in self.branches]` over a module list built as one module standing
    for n copies (`[Block() for _ in range(n)]`): the element once, its cost under a loop of n, as a
    `for` over the list runs; the list holds n copies of what it made (a list of n tensors of that
    shape, each computed by its own copy), listed where n is a known number."""
    repeat = Repeat(modules.count, [])
    with interp.run.collecting(repeat.entries):
        item = interp.with_env({**interp.env, loop.target.value: modules.items[0]}).eval(node.elt)
    interp.run.add(repeat)
    if python_values.is_module_value(item):
        return ModuleList((item,), modules.count)
    grown = python_values.GrowingList(0, [(item, modules.count)])
    return known_values.appended_data(grown) if type(node) is cst.ListComp else None
