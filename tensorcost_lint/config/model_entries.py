"""`models:` entries (Contract 7): whole-model analyses named in the config.

Each entry is validated here, once, into a frozen ModelEntry; the interpretation lives in
`tensorcost_lint.whole_model`. Errors name the file, the key path and the reason (exit 2).
"""

from __future__ import annotations

import math

import json
from dataclasses import dataclass, field
from pathlib import Path

from estimator import EstimatorError, normalize_dtype
from shape_annotations import ShapeDim, ShapeError, parse_shape_string

from .build_expressions import parse_build
from .byte_sizes import parse_byte_size
from .errors import ConfigError
from .fields import MappingReader
from .memory_settings import MemorySettings, parse_memory_settings
from .safe_yaml import read_text_file

MODES = ("inference", "training", "prefill", "decode")  # prefill/decode: Contract 9
# Each configured model is one whole-model run of `check` (seconds each): a config of 2,000 entries
# would make every check take minutes, so past this many it is refused, as any other bad value.
MAX_MODELS = 64
MAX_QUALNAME_CHARACTERS = 200  # a qualified name (`GPT.forward`) longer than any real one is refused
CAUSAL_ATTENTION_FLOPS = ("unmasked", "dense")
_BUDGET_KEYS = ("flops", "retained_bytes", "latency_seconds")


@dataclass(frozen=True)
class ModelInput:
    name: str
    dtype: str | None  # canonical estimator dtype name, or None (the config's default_dtype)
    dims: tuple  # DimExprs


@dataclass(frozen=True)
class ModelEntry:
    name: str
    entry: str  # as written: FILE:QUALNAME
    path: str  # FILE resolved against the config file's directory
    qualname: str
    inputs: tuple = ()  # ModelInput
    dims: dict = field(default_factory=dict)  # from dims_from: integer fields of a config.json
    mode: str = "inference"
    assume: dict = field(default_factory=dict)  # condition text -> bool | int | float | str
    budgets: dict = field(default_factory=dict)  # kept for TCL503
    config_values: dict = field(default_factory=dict)  # the dims_from JSON object: what `config.x` reads
    memory: MemorySettings = MemorySettings()  # optimizer, precision, KV cache (Contract 9)
    # directories the command line named (`--entry`'s package): readable beyond the project root
    readable: tuple = ()
    # Contract 7a: the Python call that builds the model (then `entry` is a method of what it
    # builds, `qualname` that method's name and `path` the config file, whose folder names resolve in)
    build: str | None = None


def parse_entry_text(text: str, root: Path | None, error) -> tuple[str, str]:
    """`model.py:GPT.forward` → (resolved path, qualname)."""
    file_part, colon, qualname = text.rpartition(":")
    if len(qualname) > MAX_QUALNAME_CHARACTERS:
        raise error(f"the qualified name has {len(qualname):,} characters (at most {MAX_QUALNAME_CHARACTERS})")
    if not colon or not file_part or not qualname or not all(p.isidentifier() for p in qualname.split(".")):
        raise error("expected FILE:QUALNAME, e.g. model.py:GPT.forward")
    path = Path(file_part)
    if not path.is_absolute() and root is not None:
        path = root / path
    return str(path), qualname


def parse_input_spec(name: str, text: object, error) -> ModelInput:
    """`"int64 B T"`: an optional dtype, then a jaxtyping shape."""
    if not isinstance(text, str) or not text.strip():
        raise error(f"expected a string like \"int64 B T\", got {text!r}")
    words = text.split(maxsplit=1)
    dtype = None
    shape_text = text
    try:
        dtype = normalize_dtype(words[0], name).name
        shape_text = words[1] if len(words) > 1 else ""
    except EstimatorError:
        dtype = None
    try:
        parsed = parse_shape_string(shape_text)
    except ShapeError as problem:
        raise error(f"invalid shape {shape_text!r}: {problem.message}") from None
    dims = []
    for dim in parsed.dims:
        if type(dim) is not ShapeDim:
            raise error(f"variadic dims are not supported in an entry input: {shape_text!r}")
        dims.append(dim.expr)
    return ModelInput(name, dtype, tuple(dims))


def read_dims_from(path: Path, source: str, key: str) -> dict[str, int]:
    """Each integer field (not bool) of a Hugging Face config.json is a dim of its name."""
    return dims_of_config(read_config_json(path, source, key))


def dims_of_config(document: dict) -> dict[str, int]:
    return {name: value for name, value in document.items()
            if isinstance(name, str) and name.isidentifier() and type(value) is int and 1 <= value <= 2**63 - 1}


def read_config_json(path: Path, source: str, key: str) -> dict:
    """A Hugging Face config.json as its JSON object (the analysis reads `config.x` from it)."""
    try:
        text = read_text_file(path, str(path))
    except ConfigError as problem:  # named by the config key that points at the file
        raise ConfigError(source, key, f"{path}: {problem.reason}") from None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as problem:
        raise ConfigError(source, key, f"{path}: invalid JSON: {str(problem)[:200]}") from None
    if not isinstance(document, dict):
        raise ConfigError(source, key, f"{path}: expected a JSON object")
    return document


def _assume(reader: MappingReader) -> dict:
    values = {}
    for condition in list(reader.value):
        value = reader.raw(condition)
        if not condition.strip():
            raise reader.error(condition, "a condition must be non-empty code, e.g. self.flash")
        too_large = isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**63 - 1
        not_finite = isinstance(value, float) and not math.isfinite(value)
        if not isinstance(value, (bool, int, float, str)) or too_large or not_finite:
            raise reader.error(condition, f"expected true, false, a number or a string, got {value!r}")
        values[" ".join(condition.split())] = value
    return values


def _budgets(reader: MappingReader) -> dict:
    reader.allow_only(_BUDGET_KEYS)
    budgets = {}
    for key in _BUDGET_KEYS:
        raw = reader.raw(key)
        if raw is None:
            budgets[key] = None
        elif key == "latency_seconds":
            budgets[key] = reader.check_number(key, raw)
        elif key == "retained_bytes":  # a byte size, as the other byte budgets (`2GiB`)
            try:
                budgets[key] = parse_byte_size(raw)
            except ValueError as error:
                raise reader.error(key, str(error)) from None
        else:
            budgets[key] = reader.check_integer(key, raw)
    return budgets


def parse_method_entry(text: str, error) -> str:
    """`entry: forward` beside `build:`: a method name of the built object."""
    if ":" in text or not text.isidentifier():
        raise error(f"with `build`, entry is a method name of the built object (e.g. forward), got {text!r}")
    return text


def parse_model(name: str, reader: MappingReader, root: Path | None, confinement=None) -> ModelEntry:
    reader.allow_only(("entry", "build", "inputs", "dims_from", "mode", "assume", "budgets", "optimizer",
                       "precision", "cache_len", "cache_dtype", "sequence_dim",
                       "cache_parameter"))
    build = reader.text("build")
    if build is not None:
        parse_build(build, lambda reason: reader.error("build", reason))
        entry_text = reader.text("entry", "forward")
        qualname = parse_method_entry(entry_text, lambda reason: reader.error("entry", reason))
        path = str((root or Path.cwd()) / Path(reader.source).name)
    else:
        entry_text = reader.text("entry", required=True)
        path, qualname = parse_entry_text(entry_text, root, lambda reason: reader.error("entry", reason))
        _confined(confinement, path, entry_text.rpartition(":")[0], reader, "entry")
    inputs = []
    inputs_reader = reader.mapping("inputs")
    if inputs_reader is not None:
        for input_name in list(inputs_reader.value):
            if not input_name.isidentifier():
                raise inputs_reader.error(input_name, "an input name must be a parameter name")
            spec = inputs_reader.raw(input_name)
            inputs.append(parse_input_spec(
                input_name, spec, lambda reason, n=input_name: inputs_reader.error(n, reason)))
    dims, values = {}, {}
    dims_from = reader.text("dims_from")
    if dims_from is not None:
        json_path = Path(dims_from)
        if not json_path.is_absolute() and root is not None:
            json_path = root / json_path
        _confined(confinement, json_path, dims_from, reader, "dims_from")
        values = read_config_json(json_path, reader.source, f"{reader.prefix}.dims_from")
        dims = dims_of_config(values)
    mode = reader.choice("mode", MODES, "inference")
    assume_reader = reader.mapping("assume")
    assume = _assume(assume_reader) if assume_reader is not None else {}
    budgets_reader = reader.mapping("budgets")
    budgets = _budgets(budgets_reader) if budgets_reader is not None else {}
    memory = parse_memory_settings(reader, mode)
    reader.finish()
    return ModelEntry(name, entry_text, path, qualname, tuple(inputs), dims, mode, assume, budgets, values, memory,
                      build=build)


def _confined(confinement, path, shown: str, reader: MappingReader, key: str) -> None:
    if confinement is not None:
        try:
            confinement.check(path, shown)
        except OSError as error:  # confinement.OutsideProject
            raise reader.error(key, str(error)) from None


def parse_models(reader: MappingReader, root: Path | None, confinement=None) -> tuple[ModelEntry, ...]:
    models_reader = reader.mapping("models")
    if models_reader is None:
        return ()
    entries = []
    if len(models_reader.value) > MAX_MODELS:
        raise reader.error("models", f"{len(models_reader.value):,} models configured (at most {MAX_MODELS}: each "
                                     "is a whole-model run of every check)")
    for name in list(models_reader.value):
        if not name.strip():
            raise models_reader.error(name, "a model name must be non-empty")
        entry_reader = models_reader.mapping(name, required=True)
        entries.append(parse_model(name, entry_reader, root, confinement))
    models_reader.finish()
    return tuple(entries)
