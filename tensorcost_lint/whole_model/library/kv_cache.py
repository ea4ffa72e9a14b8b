"""`totals.memory.kv_cache` of a prefill (Contract 9): the bytes of the tensors the model's own
cache object holds when the forward returns, by storage, from the values the run computed.

The cache is whatever object of a class of the tree the forward returns that is not a module (a
transformers `DynamicCache` in `outputs.past_key_values`, a user's own cache class): reached
through the returned records, tuples, lists and dicts; inside it, every tensor reachable through
its attributes, lists, dicts and the objects it holds (one cache layer object per layer) counts,
once per storage (two views of one tensor are one allocation; the storage's own size counts). No
names are read: the objects and tensors are the run's own values. Unknown stays unknown: an
attribute whose value the run does not know, a tensor of unknown size, a run that did not follow
every call (an update it did not see) make the figure null, with why."""

from __future__ import annotations

from estimator import normalize_dtype
from shape_annotations import Const, Polynomial, ShapeError

from ...analysis.facts import SelfFact, SequenceFact, TensorFact
from ..values.library_objects import MappingFact, RecordFact
from ..values.objects import ModuleList
from ..values.optional_values import MaybeNone

MAX_OBJECTS = 100_000  # values visited in the returned cache (bounded work on a hostile object graph)


def kv_cache_bytes(run, returned, sizes: dict, default_dtype: str, cache_dtype: str | None):
    """(bytes, formula, reason): the bytes and their formula in the dims, or (None, None, why)."""
    if run.unfollowed or run.limits:
        return None, None, "a call was not followed: what it would put in the cache is not known"
    caches = cache_objects(run, returned)
    if not caches:  # tensors returned as tuples may be a cache too (a legacy `presents`): not claimed
        return None, None, "the forward returns no cache object (an object of a class holding the cached tensors)"
    tensors, reason = _held_tensors(run, caches)
    if reason is not None:
        return None, None, reason
    total, formula = 0, Polynomial.const(0)
    storages: set = set()
    for fact, copies in tensors:
        layout = run.storage.layout(fact)
        storage = layout.storage if layout is not None else fact
        if id(storage) in storages:
            continue
        storages.add(id(storage))
        width = normalize_dtype(cache_dtype or fact.dtype or default_dtype).bytes
        try:
            count = copies.evaluate(sizes)
        except ShapeError as error:
            return None, None, f"the cache holds a repeated object whose count the run does not know ({error})"
        if layout is not None and layout.storage.numel is not None and layout.sizes is not None \
                and layout.storage.numel != _product(layout.sizes):
            total += layout.storage.numel * width * count  # a view of a larger allocation: the allocation counts
            formula = None
            continue
        elements = Polynomial.from_dims(fact.shape) if fact.shape is not None else None
        if elements is None:
            return None, None, "a tensor the cache holds has a size the run does not know"
        try:
            total += elements.evaluate(sizes) * width * count
        except ShapeError as error:
            return None, None, f"a tensor the cache holds has a size the run does not know ({error})"
        if formula is not None:
            formula = formula + elements * copies * width
    return total, (formula.render() if formula is not None else None), None


def _product(values) -> int:
    result = 1
    for value in values:
        result *= value
    return result


def cache_objects(run, value) -> list:
    """The objects of the tree's classes the returned value holds that are not modules."""
    found, pending, seen = [], [value], set()
    while pending and len(seen) < MAX_OBJECTS:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if type(item) is SelfFact:
            if item not in run.paths and run.instance(item) is not None:
                found.append(item)
        elif type(item) is RecordFact:
            pending.extend(field for _, field in item.fields)
        elif type(item) is SequenceFact:
            pending.extend(item.items)
        elif type(item) is MappingFact:
            pending.extend(field for _, field in item.items)
        elif type(item) is MaybeNone:
            pending.append(item.value)
    return found


def _held_tensors(run, caches) -> tuple:
    """([(tensor, copies)], None) reachable from the cache objects, or (None, why). `copies`: the
    polynomial count of a tensor held by an item of a repeated list (`[Layer() for _ in range(n)]`
    is one object standing for n, each filled by one pass of the layers' loop)."""
    tensors, pending, seen = [], [(item, Polynomial.const(1)) for item in caches], set()
    while pending:
        if len(seen) >= MAX_OBJECTS:
            return None, f"the cache holds more than {MAX_OBJECTS} values (bounded work)"
        item, copies = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if type(item) is TensorFact:
            tensors.append((item, copies))
        elif type(item) is SelfFact:
            if item in run.paths:
                continue  # a module the cache refers to: its parameters are no cache
            if item in run.incomplete_objects:
                return None, f"an object of the cache ({_class(run, item)}) may hold attributes the run did not see"
            for name, held in item.attributes.items():
                if held is None:
                    return None, f"`{name}` of the cache's {_class(run, item)} has a value the run does not know"
                pending.append((held, copies))
        elif type(item) is RecordFact:
            pending.extend((field, copies) for _, field in item.fields if field is not None)
        elif type(item) is SequenceFact:
            pending.extend((i, copies) for i in item.items if i is not None)
            if any(i is None for i in item.items):
                return None, "a list the cache holds has an item the run does not know"
        elif type(item) is ModuleList:
            repeated = copies
            if item.count is not None:
                count = Polynomial.from_dims((item.count,))
                if count is None:
                    return None, "the cache holds a repeated object whose count the run does not know"
                repeated = copies * count
            pending.extend((i, repeated) for i in item.items)
        elif type(item) is MappingFact:
            pending.extend((field, copies) for _, field in item.items)
        elif type(item) is MaybeNone:
            return None, "a tensor the cache holds may or may not be there (an undecided branch)"
        elif type(item).__name__ == "GrowingList":
            if item.unknown or any(count != Const(1) for _, count in item.runs):
                return None, "a list the cache holds grew by appends the run could not follow one by one"
            pending.extend((value, copies) for value, _ in item.runs)
    return tensors, None


def _class(run, item) -> str:
    instance = run.instance(item)
    return instance.class_name if instance is not None else "object"
