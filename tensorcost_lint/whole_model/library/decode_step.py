"""`mode: decode` (Contract 9): one new token against a KV cache of `cache_len` tokens, costed on
the model's own decode path.

The cache is the one the model's code builds, never a shape we make up: the run first interprets
the forward as a prefill of `cache_len` tokens (every input's sequence dim is `cache_len`), takes
the cache object that forward returns (kv_cache.py: an object of a class of the tree that is not a
module, reached through the returned value), and then interprets the forward again with one token
(the sequence dim is 1) and that object passed back as the forward's parameter of the name of the
returned field that holds it (transformers 5.24: `cache`, returned as `outputs.cache`; earlier:
`past_key_values`), or the parameter `cache_parameter` names, as `generate()` does step after step. Only the second forward's ops are the entry's totals; the cache
after it holds `cache_len + 1` tokens, which is `kv_cache`.

The prefill's ops are recorded into a list that is then dropped; what it could not follow or
decide stays in the run's lists, so a cache the run did not see filled completely makes the
decode's figures partial, never silently complete."""

from __future__ import annotations

from shape_annotations import Const, Sym

from ...analysis.facts import TensorFact
from ..values.library_objects import MappingFact, RecordFact
from ..source.dim_reads import recorded_like
from .kv_cache import cache_objects
from ..values.objects import BoolFact
from ..values.source_error import SourceError

CACHE_DIM = "cache_len"  # the dim the prefill's sequence is, bound to the entry's cache_len


USE_CACHE = "use_cache"


def serving_switch(entry, parameters: set) -> dict:
    """A serving run keeps its cache as the model's config says: `use_cache=` the config's value
    (True when it names none, as `generate()` asks), given to a forward that takes the switch. Its
    default, None, means "the config's", which transformers fills in at run time by a decorator
    (`merge_with_config_defaults`) whose wrapper the run does not interpret."""
    if entry.mode not in ("prefill", "decode") or USE_CACHE not in parameters \
            or any(spec.name == USE_CACHE for spec in entry.inputs):
        return {}
    return {USE_CACHE: BoolFact(entry.config_values.get(USE_CACHE) is not False)}


def step_inputs(inputs, sequence_dim: str | None, length) -> dict:
    """The entry's inputs (no gradient) with every `sequence_dim` replaced by `length`."""
    keywords = {}
    for spec in inputs:
        dims = tuple(length if type(dim) is Sym and dim.name == sequence_dim else dim for dim in spec.dims)
        keywords[spec.name] = TensorFact(dims, spec.dtype, framework="torch")
    return keywords


def decode_sizes(entry, sizes: dict) -> dict:
    """The run's sizes with `cache_len` bound; a decode entry the run could not give one token
    against a cache is refused in one line."""
    sequence_dim = entry.memory.sequence_dim
    if not any(type(dim) is Sym and dim.name == sequence_dim for spec in entry.inputs for dim in spec.dims):
        raise SourceError(f"{entry.name}: mode decode: no input has the sequence dim {sequence_dim!r} (the dim "
                          "that is cache_len in the prefill and 1 in the decode step; name it with sequence_dim)")
    given = dict.get(sizes, CACHE_DIM)
    if given is not None and given != entry.memory.cache_len:
        raise SourceError(f"{entry.name}: dim {CACHE_DIM!r} = {given} contradicts cache_len {entry.memory.cache_len}")
    return recorded_like(sizes, {**sizes, CACHE_DIM: entry.memory.cache_len})


def _cache_parameter(run, entry, returned, caches: list, parameters: set) -> str:
    """The forward's parameter the cache goes back into: `cache_parameter`, else the name of the
    returned record's (or dict's) field that holds the cache object."""
    name = entry.memory.cache_parameter
    if name is None:
        fields = returned.fields if type(returned) is RecordFact else \
            returned.items if type(returned) is MappingFact else ()
        holding = [field for field, value in fields if isinstance(field, str) and value is not None
                   and any(found is caches[0] for found in cache_objects(run, value))]
        if len(holding) != 1:
            raise SourceError(f"{entry.name}: mode decode: the forward returns its cache in no named field: name the "
                              "parameter that takes it back with cache_parameter")
        name = holding[0]
    if name not in parameters:
        raise SourceError(f"{entry.path}: {entry.qualname} has no parameter {name!r}: mode decode passes the "
                          "cache its prefill returns there (cache_parameter names another)")
    if any(spec.name == name for spec in entry.inputs):
        raise SourceError(f"{entry.name}: mode decode passes the cache to {name}: it cannot also be an input")
    return name


def run_decode(run, function, entry, parameters: set, switch: dict):
    """Interpret the prefill (ops dropped) and then the decode step (ops kept in the run's entry
    list); return what the decode step returns."""
    sequence_dim = entry.memory.sequence_dim
    with run.collecting([]):  # the prefill builds the cache; its cost is not the step's
        keywords = {**step_inputs(entry.inputs, sequence_dim, Sym(CACHE_DIM)), **switch}
        prefilled = run._invoke(function, [], keywords, None)
    caches = cache_objects(run, prefilled)
    if not caches:
        raise SourceError(f"{entry.name}: mode decode: the forward's prefill of cache_len tokens returns no cache "
                          "object (an object of a class holding the cached tensors) to decode against")
    if len(caches) > 1:
        raise SourceError(f"{entry.name}: mode decode: the prefill returns {len(caches)} cache objects; which one "
                          "the step takes back is not known")
    # a memoised call of the prefill read the cache before it was filled (`get_seq_length()` is 0
    # then): the step runs every call afresh on the filled cache
    run.memo.clear()
    keywords = {**step_inputs(entry.inputs, sequence_dim, Const(1)), **switch}
    keywords[_cache_parameter(run, entry, prefilled, caches, parameters)] = caches[0]
    return run._invoke(function, [], keywords, None)
