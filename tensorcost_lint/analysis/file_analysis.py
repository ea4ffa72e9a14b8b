"""One file: imports, flags and pragmas from the stdlib tree, then LibCST trees of the units that matter.

`analyse_source` is the single entry of the analysis; it returns the call sites and the analysis
facts it reported at places (analysis.problems). Costs and rules come after, from these records alone.
A unit's LibCST tree comes from LibCST's parser, or (`front_end="ast"`, the flake8 plugin) is built
from the stdlib tree by ast_front.py, which falls back to the parser for what it does not build.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, replace

import libcst as cst

from shape_annotations import AString, Const, ShapeError, merge_dim_bindings, parse_pragma

from .annotations import to_tree
from .ast_front import convert_module, convert_unit
from .ast_positions import SourceText
from .cst_parse import parse_module
from .context import FileFlags, FileSettings, Recorder, UnitContext
from .facts import DimFact, SelfFact
from .function_flow import FunctionFlow, analyse_class, analyse_function, is_static, self_for
from .problems import UnitNotParsed, Unparseable
from .imports import ast_dotted_name, import_table_from_ast
from .units import select_units
from ..safe_io.source_lines import source_lines

_PRAGMA = re.compile(r"#\s*tensorcost\s*:")
_FLAG_ASSIGNMENTS = {
    "torch.backends.cuda.matmul.allow_fp16_accumulation": "fp16_accumulation",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction": "bf16_reduced_reduction",
    "torch.backends.cuda.matmul.allow_tf32": "tf32",
}


@dataclass
class FileAnalysis:
    sites: list
    reported: list  # problems.Reported
    sizes: dict
    flags: FileFlags
    bindings: list | None = None  # context.Binding, when asked for


def read_pragmas(text: str, recorder: Recorder) -> dict:
    """`# tensorcost: dims T=1024 B=8` comments anywhere in the file (later ones win). Only real
    comments count: the same text inside a string or docstring is not a pragma."""
    sizes: dict = {}
    if "tensorcost" not in text:
        return sizes
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return sizes  # not valid Python: the syntax error is reported instead
    for token in tokens:
        match = _PRAGMA.match(token.string)
        if not match:
            continue
        line, column = token.start
        try:
            parsed = parse_pragma(token.string)
        except ShapeError as error:
            recorder.report(Unparseable("tensorcost pragma", error.message), line, column + 1 + (error.offset or 0))
            continue
        if parsed:
            sizes.update(parsed)
    return sizes


def _primary_framework(imports) -> str:
    targets = set(imports.aliases.values())
    for framework, prefix in (("torch", "torch"), ("jax", "jax"), ("numpy", "numpy")):
        if any(t == prefix or t.startswith(prefix + ".") for t in targets):
            return framework
    return "torch"


_FLAG_TEXT = re.compile(r"allow_fp16_accumulation|allow_bf16_reduced_precision_reduction|allow_tf32"
                        r"|set_float32_matmul_precision")


def read_flags(tree: ast.Module, imports, text: str) -> FileFlags:
    """File-wide switches, wherever in the file they are set (walked only if their names appear)."""
    flags: dict = {}
    if not _FLAG_TEXT.search(text):
        return FileFlags()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is True:
            for target in node.targets:
                dotted = ast_dotted_name(target)
                flag = _FLAG_ASSIGNMENTS.get(imports.resolve_text(dotted) or "") if dotted else None
                if flag is not None:
                    flags[flag] = f"{dotted} = True (line {node.lineno})"
        elif isinstance(node, ast.Call) and node.args:
            dotted = ast_dotted_name(node.func)
            if dotted and imports.resolve_text(dotted) == "torch.set_float32_matmul_precision":
                value = node.args[0]
                if isinstance(value, ast.Constant) and value.value in ("high", "medium"):
                    flags["tf32"] = f"torch.set_float32_matmul_precision({value.value!r}) (line {node.lineno})"
    return FileFlags(**flags)


def _unit_offset(lines: list[str], start: int) -> int:
    """The unit's line offset as `_parse_unit` counts it (sites sort by it, then in recording order)."""
    return start - 2 if lines[start - 1][:1] in (" ", "\t") else start - 1


def _unit(settings: FileSettings, recorder: Recorder, lines: list[str], start: int, end: int, node=None,
          source: SourceText | None = None):
    """(unit context, first statement): built from the stdlib `node` when there is a `source` to
    read it against and ast_front builds all of it, else parsed by LibCST."""
    if source is not None and node is not None:
        try:
            return convert_unit(settings, recorder, source, node, _unit_offset(lines, start))
        except Exception:  # noqa: BLE001 - Unsupported, or anything unforeseen: LibCST decides, as before
            pass
    return _parse_unit(settings, recorder, lines, start, end)


def _parse_unit(settings: FileSettings, recorder: Recorder, lines: list[str], start: int, end: int):
    """(unit context, first statement) for source lines [start, end], parsed on their own. An
    indented unit (a method) is wrapped in `if 1:` so its indentation stays as written."""
    segment = "".join(lines[start - 1: end])
    offset = start - 1
    if segment[:1] in (" ", "\t"):
        newline = "\r\n" if segment.endswith("\r\n") else "\n"
        segment = "if 1:" + newline + segment
        offset -= 1
    module = parse_module(segment)
    statement = module.body[0]
    if isinstance(statement, cst.If):
        statement = statement.body.body[0]
    return UnitContext(settings, recorder, module, offset), statement


def _read_aliases(settings: FileSettings, recorder: Recorder, lines: list[str], spans, nodes,
                  source: SourceText | None) -> FileSettings:
    """The settings with the file's `Name = Float[...]` aliases (read in both analysis modes)."""
    aliases, alias_strings = {}, {}
    for (start, end), node in zip(spans, nodes):
        ctx, statement = _unit(settings, recorder, lines, start, end, node, source)
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if isinstance(small, cst.Assign):
            target, value = small.targets[0].target, small.value
        elif isinstance(small, cst.AnnAssign):
            target, value = small.target, small.value
        else:
            continue
        tree = to_tree(value, ctx)
        aliases[target.value] = tree
        for string in _strings(tree):
            alias_strings[id(string)] = (ctx, value)
    return replace(settings, aliases=aliases, alias_strings=alias_strings)


def _strings(tree):
    if type(tree) is AString:
        yield tree
    for child in getattr(tree, "items", ()) or getattr(tree, "options", ()):
        yield from _strings(child)
    value = getattr(tree, "value", None)
    if value is not None and not isinstance(value, str):
        yield from _strings(value)


def _whole_file(settings: FileSettings, recorder: Recorder, text: str, tree, source: SourceText | None) -> None:
    ctx = None
    if source is not None:
        try:
            ctx, module = convert_module(settings, recorder, source, tree)
        except Exception:  # noqa: BLE001 - as in `_unit`
            ctx = None
    if ctx is None:
        module = parse_module(text)
        ctx = UnitContext(settings, recorder, module)
    FunctionFlow(ctx, {}).run(module.body)


def _by_units(settings: FileSettings, recorder: Recorder, lines: list[str], selection,
              source: SourceText | None) -> None:
    env = {name: DimFact(Const(value)) for name, value in selection.constants.items()}
    self_facts: dict = {}
    for unit in sorted(selection.units, key=lambda u: (u.class_key or u.start, not u.is_init, u.start)):
        try:
            ctx, node = _unit(settings, recorder, lines, unit.start, unit.end, unit.node, source)
        except cst.ParserSyntaxError as error:
            recorder.report(UnitNotParsed(unit.start, unit.end, error.message), unit.start, 1)
            continue
        if unit.kind == "class":
            analyse_class(ctx, node, dict(env))
        elif unit.kind == "method":
            self_fact = self_facts.setdefault(unit.class_key, SelfFact({}))
            analyse_function(ctx, node, dict(env), None if is_static(node) else self_for(node, self_fact))
        else:
            analyse_function(ctx, node, dict(env))


def analyse_source(text: str, path: str, config, cli_dims: dict | None = None, tree=None,
                   bindings: bool = False, front_end: str = "libcst") -> FileAnalysis:
    """Analyse a file. Raises SyntaxError (from `ast`) on invalid Python; `tree` may be the stdlib
    tree a host already parsed (flake8 hands its plugins one). `bindings`: also record each tensor
    binding and use (the editor's hints and hover). `front_end="ast"` builds the units' trees from
    the stdlib tree (same findings, sites and facts; no bindings, which need LibCST's positions)."""
    recorder = Recorder(bindings)
    pragma_sizes = read_pragmas(text, recorder)
    sizes = merge_dim_bindings(config.dims, pragma_sizes, cli_dims or {})
    if tree is None:
        tree = ast.parse(text)
    imports = import_table_from_ast(tree)
    settings = FileSettings(
        path=path, imports=imports, sizes=sizes,
        default_dtype=config.default_dtype, strict_broadcast=config.broadcast_policy == "strict",
        sequence_dims=tuple(config.sequence_dims), flags=read_flags(tree, imports, text),
        primary_framework=_primary_framework(imports),
    )
    lines = source_lines(text, keepends=True)
    uses_einops = any(target == "einops" or target.startswith("einops.") for target in imports.aliases.values())
    selection = select_units(tree, [line.rstrip("\r\n") for line in lines], einops=uses_einops)
    source = SourceText(text, lines) if front_end == "ast" and not bindings else None
    settings = _read_aliases(settings, recorder, lines, selection.alias_statements, selection.alias_nodes, source)
    if selection.whole_file:
        _whole_file(settings, recorder, text, tree, source)
    else:
        _by_units(settings, recorder, lines, selection, source)
    # Units run __init__-first; a stable sort by unit start numbers sites in file order without
    # resolving any position (sites in one unit are recorded in evaluation order).
    ordered = sorted(recorder.sites, key=lambda site: site.span.order)
    sites = [replace(site, id=index) for index, site in enumerate(ordered)]
    return FileAnalysis(sites, recorder.reported, sizes, settings.flags, recorder.bindings)
