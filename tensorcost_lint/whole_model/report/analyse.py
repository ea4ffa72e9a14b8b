"""Entry point of a whole-model analysis: a configured (or command-line) ModelEntry to totals."""

from __future__ import annotations

import ast

from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst

from ...analysis.facts import CONFIG
from ..run.build_entry import built_entry
from ..python.config_objects import bind_root_config
from ..library.decode_step import decode_sizes, run_decode, serving_switch, step_inputs
from ..source.dim_reads import RecordedSizes, unread_warnings
from ..library.kv_cache import cache_objects
from ..library.library_values import apply_root_setters, config_class_values
from ..memory.memory_totals import MemoryTotals, memory_totals
from ..run.model_run import ModelRun, _method
from ..values.objects import FunctionRef
from ..memory.retention import Retention, RetentionTooLarge, retention
from ..values.source_error import SourceError
from ..source.source_tree import SourceTree
from .totals import Totals, total


MEMORY_PROBLEM = "retained bytes"


@dataclass
class ModelResult:
    entry: object  # ModelEntry
    totals: Totals
    undecided: list
    problems: list
    not_followed: list  # (path, line, column, expression, reason)
    classes: dict  # module path -> class name
    root: Path
    files: list = field(default_factory=list)  # every file the run read (absolute): what its result depends on
    retention: Retention | None = None  # peak retained bytes, in total and per module
    memory: MemoryTotals | None = None  # totals.memory (Contract 9)
    warnings: list = field(default_factory=list)  # Contract 7a: declared dims the run never read
    # (file, line, column) of the entry method's `def`: a build entry's lies in the class it built
    entry_at: tuple | None = None
    unified: list = field(default_factory=list)  # dim_unification.Unified: unsized dims given the size they met

    @property
    def calls_not_costed(self) -> list:
        """The problems that leave FLOPs out (a recursive call), not those of the memory figures."""
        return [problem for problem in self.problems if problem[0] not in (MEMORY_PROBLEM, "memory")]


def _entry_function(run, entry):
    """(the object built with its constructor defaults or None, the FunctionRef) of `FILE:QUALNAME`."""
    source = run.tree.load(Path(entry.path))
    if entry.config_values:
        bind_root_config(run, source)  # the config is an instance of its class: its methods and properties run
        found = run.instance(CONFIG)
        run.config_names, run.config_defaults = config_class_values(
            run.tree, source, None if found is None else (found.source, found.class_name))
        apply_root_setters(run)  # config.json's fields through their property setters
    parts = entry.qualname.split(".")
    definition = source.definitions.get(parts[0])
    if definition is None:
        raise SourceError(f"{entry.path}: {parts[0]} is not defined at the top level of this file")
    if isinstance(definition, cst.ClassDef):
        method_name = parts[1] if len(parts) > 1 else "forward"
        method = _method(definition, method_name)
        if method is None or len(parts) > 2:
            raise SourceError(f"{entry.path}: {entry.qualname} is not a method of {parts[0]}")
        self_fact = run.build(source, definition, [], {}, read_missing_as_dims=True)
        run.assign_paths(self_fact)
        return self_fact, FunctionRef(source, method, run.instance(self_fact))
    if len(parts) > 1:
        raise SourceError(f"{entry.path}: {entry.qualname}: {parts[0]} is a function")
    return None, FunctionRef(source, definition)


def _definition_at(run, function) -> tuple | None:
    """(file, line, column) of the entry method's `def`: from the LibCST positions, or, for a
    definition built from the stdlib tree whose name node has none, from that tree."""
    try:
        line, column, _, _ = function.source.ctx.position(function.node.name)
        return str(function.source.path), line, column - len("def ")
    except (KeyError, AttributeError):
        pass
    instance = function.bound
    found = run.tree.class_ast(function.source, instance.class_name) if instance is not None else None
    if found is None:
        return None
    for statement in found[1].body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == function.node.name.value:
            return str(found[0].path), statement.lineno, statement.col_offset + 1
    return None


def analyse_model(entry, config, cli_dims: dict) -> ModelResult:
    sizes = RecordedSizes({**entry.dims, **config.dims, **cli_dims})
    if entry.mode == "decode":
        sizes = decode_sizes(entry, sizes)
    root_path = Path(config.root) if config.root else Path(entry.path).resolve().parent
    settings_config = replace(config, dims=sizes)
    # the project root and source_roots; what the command line named is the user's explicit choice
    confinement = config.confinement.widened(*entry.readable)
    run = ModelRun(lambda recorder: SourceTree(root_path, settings_config, {}, recorder, confinement), sizes,
                   entry.mode, entry.assume, entry.config_values, config.work_budget)
    run.default_dtype = config.default_dtype  # `.to(torch.float32)` of a default-dtype tensor is no copy
    if entry.build is not None:  # Contract 7a: the object as the user builds it
        root, function = built_entry(run, entry, settings_config, Path(entry.path).parent)
    else:
        root, function = _entry_function(run, entry)
    keywords = step_inputs(entry.inputs, None, None)  # entry inputs need no gradient
    parameters = {p.name.value for p in [*function.node.params.params, *function.node.params.kwonly_params,
                                         *function.node.params.posonly_params]}
    # an input the entry takes through `**kwargs` is bound there, as Python binds any other keyword
    takes_any = isinstance(function.node.params.star_kwarg, cst.Param)
    for name in keywords:
        if name not in parameters and not takes_any:
            raise SourceError(f"{entry.path}: {entry.qualname} has no parameter {name!r} (inputs.{name})")
    switch = serving_switch(entry, parameters)  # a serving run keeps its cache
    if entry.mode == "decode":  # the model's prefill of cache_len tokens, then one token against its cache
        returned = run_decode(run, function, entry, parameters, switch)
    else:
        returned = run._invoke(function, [], {**keywords, **switch}, None)
    run.returned = returned  # what the forward returns: the cache a prefill keeps (kv_cache.py)
    if entry.mode == "training":
        # the backward runs only what the output needs
        run.grad_flow.prune(returned, run.stack[0], not run.unfollowed and not run.limits,
                            state=cache_objects(run, returned))
    totals = total(run.stack[0], sizes, config, entry.mode == "training")
    not_followed = []
    for ctx, node, reason in run.unfollowed:
        line, column, _, _ = ctx.position(node)
        not_followed.append((ctx.settings.path, line, column, ctx.code(node), reason))
    try:
        kept = retention(run.stack[0], sizes, config.default_dtype, entry.mode == "training",
                         config.work_budget.entries)
    except RetentionTooLarge as error:  # a limit: listed where the run started
        kept = Retention(None, {})
        run.limit_at(function, "retained bytes", str(error))
    except OverflowError as error:  # exact counts are refused above 2**63-1, never wrapped
        kept = Retention(None, {})
        run.problems.append((MEMORY_PROBLEM, str(error)))
    not_followed.extend(run.limits)
    for source in run.tree.files.values():  # definitions too long to read whole
        if source is not None:
            not_followed.extend(source.definitions.cuts)
    if run.storage.failure is not None:
        kept = Retention(None, {})
        run.problems.append((MEMORY_PROBLEM, f"not computed ({run.storage.failure})"))
    try:
        memory = memory_totals(run, root, entry, config.default_dtype, kept.peak_bytes, sizes)
    except (OverflowError, ArithmeticError) as error:  # exact counts above 2**63-1 are refused, never wrapped
        memory = None
        run.problems.append(("memory", str(error)))
    warnings = unread_warnings(config.dims, cli_dims, sizes, run.stack[0], entry.inputs,
                               [source for source in run.tree.files.values() if source is not None])
    files = sorted(str(path) for path in run.tree.files if path not in run.tree.virtual)  # the build's text is in no file
    return ModelResult(entry, totals, run.undecided, run.problems, not_followed, run.classes, root_path,
                       files, kept, memory, warnings, _definition_at(run, function), list(run.unified))
