"""The memory keys of a `models:` entry (Contract 9): `optimizer`, `precision`, `cache_len`,
`cache_dtype`, `sequence_dim`, `cache_parameter`, validated once into a frozen record; the memory model itself is in
`tensorcost_lint.whole_model.memory.memory_totals` and docs/memory.md."""

from __future__ import annotations

from dataclasses import dataclass

from estimator import EstimatorError, normalize_dtype

OPTIMIZERS = ("none", "sgd", "sgd-momentum", "adam", "adamw", "adafactor", "lion")
PRECISION_KEYS = ("parameters", "gradients", "optimizer_states", "master_weights")
SERVING_MODES = ("prefill", "decode")


@dataclass(frozen=True)
class Precision:
    """Canonical dtype names; None: as the model's code builds its parameters (the config's
    `default_dtype` where the code names none). `master_weights`: a float32 copy of every
    parameter that the optimizer updates (mixed precision), or None (no copy)."""

    parameters: str | None = None
    gradients: str | None = None  # None: the parameters' dtype (torch's `.grad` is like its parameter)
    optimizer_states: str | None = None  # None: the dtype of what the optimizer steps (torch's zeros_like)
    master_weights: str | None = None


@dataclass(frozen=True)
class MemorySettings:
    optimizer: str = "adamw"
    precision: Precision = Precision()
    cache_len: int | None = None  # decode: the tokens already in the KV cache
    cache_dtype: str | None = None  # prefill/decode: the KV cache's dtype (None: the model's)
    sequence_dim: str = "seq"  # decode: the inputs' dim that is cache_len in the prefill and 1 in the step
    cache_parameter: str | None = None  # decode: the forward's parameter the cache goes back into (None:
    # the name of the returned field that holds it)


def _dtype(reader, key: str, value) -> str | None:
    if value is None:
        return None
    try:
        return normalize_dtype(value, key).name
    except EstimatorError as error:
        raise reader.error(key, f"expected a dtype name such as float32 or bfloat16 ({error})") from None


def parse_memory_settings(reader, mode: str) -> MemorySettings:
    """Read the memory keys of one model entry from its MappingReader (the other keys are
    model_entries'); a key that does not apply to the mode is refused, so it never silently
    does nothing."""
    optimizer = reader.choice("optimizer", OPTIMIZERS, "adamw")
    if reader.has("optimizer") and mode != "training":
        raise reader.error("optimizer", f"applies to mode training only (this entry is {mode})")
    precision = Precision()
    precision_reader = reader.mapping("precision")
    if precision_reader is not None:
        precision_reader.allow_only(PRECISION_KEYS)
        values = {key: _dtype(precision_reader, key, precision_reader.raw(key)) for key in PRECISION_KEYS}
        precision_reader.finish()
        if values["master_weights"] is not None and mode != "training":
            raise precision_reader.error("master_weights", f"applies to mode training only (this entry is {mode})")
        precision = Precision(**values)
    cache_len = reader.integer("cache_len")
    if cache_len is not None and mode != "decode":
        raise reader.error("cache_len", f"applies to mode decode only (this entry is {mode})")
    cache_dtype = _dtype(reader, "cache_dtype", reader.raw("cache_dtype"))
    if cache_dtype is not None and mode not in SERVING_MODES:
        raise reader.error("cache_dtype", f"applies to modes prefill and decode only (this entry is {mode})")
    if mode == "decode" and cache_len is None:
        raise reader.error("cache_len", "required for mode decode: the tokens already in the KV cache")
    sequence_dim = reader.text("sequence_dim", "seq")
    if reader.has("sequence_dim") and mode != "decode":
        raise reader.error("sequence_dim", f"applies to mode decode only (this entry is {mode})")
    if not sequence_dim.isidentifier():
        raise reader.error("sequence_dim", f"expected a dim name of the inputs, got {sequence_dim!r}")
    cache_parameter = reader.text("cache_parameter")
    if cache_parameter is not None and mode != "decode":
        raise reader.error("cache_parameter", f"applies to mode decode only (this entry is {mode})")
    if cache_parameter is not None and not cache_parameter.isidentifier():
        raise reader.error("cache_parameter", f"expected a parameter name of the entry, got {cache_parameter!r}")
    return MemorySettings(optimizer, precision, cache_len, cache_dtype, sequence_dim, cache_parameter)
