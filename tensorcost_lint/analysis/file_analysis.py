"""One file, one parse: imports, aliases, pragmas and flags, then every function's flow.

`analyse_source` is the single entry of the analysis; it returns the call sites and the analysis
diagnostics (TCL001, TCL002). Costs and rules come after, from these records alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from shape_annotations import ShapeError, merge_dim_bindings, parse_pragma

from .annotations import facts_from_annotation, single_fact, to_tree
from .context import Diagnostic, FileContext, FileFlags
from shape_annotations import Sym

from .evaluator import SelfFact
from .facts import DimFact
from .function_flow import FunctionFlow
from .imports import build_import_table, dotted_name

_PRAGMA = re.compile(r"#\s*tensorcost\s*:")
_FLAG_ASSIGNMENTS = {
    "torch.backends.cuda.matmul.allow_fp16_accumulation": "fp16_accumulation",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction": "bf16_reduced_reduction",
    "torch.backends.cuda.matmul.allow_tf32": "tf32",
}


@dataclass
class FileAnalysis:
    sites: list
    diagnostics: list
    sizes: dict
    flags: FileFlags


def read_pragmas(text: str, diagnostics: list) -> dict:
    """`# tensorcost: dims T=1024 B=8` lines anywhere in the file (later lines win)."""
    sizes: dict = {}
    if "tensorcost" not in text:
        return sizes
    for number, line in enumerate(text.splitlines(), start=1):
        match = _PRAGMA.search(line)
        if not match:
            continue
        comment = line[match.start():]
        try:
            parsed = parse_pragma(comment)
        except ShapeError as error:
            diagnostics.append(Diagnostic("TCL001", number, match.start() + 1 + (error.offset or 0),
                                          f"cannot parse tensorcost pragma: {error.message}"))
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


def _collect_aliases_and_flags(ctx: FileContext, module: cst.Module) -> None:
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name) and isinstance(small.value, (cst.Subscript, cst.BinaryOperation)):
                    ctx.aliases[target.value] = to_tree(small.value, ctx)
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                annotation = dotted_name(small.annotation.annotation) or ""
                if annotation.endswith("TypeAlias"):
                    ctx.aliases[small.target.value] = to_tree(small.value, ctx)


class _FlagFinder(cst.CSTVisitor):
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    def visit_Assign(self, node: cst.Assign) -> None:
        if not (isinstance(node.value, cst.Name) and node.value.value == "True"):
            return
        for target in node.targets:
            name = self.ctx.imports.resolve(target.target)
            flag = _FLAG_ASSIGNMENTS.get(name or "")
            if flag is not None:
                line = self.ctx.position(node)[0]
                setattr(self.ctx.flags, flag, f"{dotted_name(target.target)} = True (line {line})")

    def visit_Call(self, node: cst.Call) -> None:
        name = self.ctx.imports.resolve(node.func) or ""
        if name == "torch.set_float32_matmul_precision" and node.args:
            value = node.args[0].value
            if isinstance(value, cst.SimpleString) and ("high" in value.value or "medium" in value.value):
                line = self.ctx.position(node)[0]
                self.ctx.flags.tf32 = f"torch.set_float32_matmul_precision({value.value}) (line {line})"


def _parameters(ctx: FileContext, node: cst.FunctionDef, env: dict, self_fact) -> dict:
    params = node.params
    ordered = [*params.posonly_params, *params.params]
    for index, param in enumerate([*ordered, *params.kwonly_params]):
        name = param.name.value
        if index == 0 and self_fact is not None and param in ordered and name in ("self",):
            env[name] = self_fact
            continue
        if param.annotation is not None:
            annotation = param.annotation.annotation
            if isinstance(annotation, cst.Name) and annotation.value == "int":
                env[name] = DimFact(Sym(name))  # `n_head: int` is the dim n_head
            else:
                env[name] = single_fact(facts_from_annotation(annotation, ctx))
        else:
            env.pop(name, None)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            env.pop(star.name.value, None)
    return env


def analyse_function(ctx: FileContext, node: cst.FunctionDef, env: dict, self_fact=None) -> None:
    flow_env = _parameters(ctx, node, env, self_fact)
    from .evaluator import Evaluator

    outer = Evaluator(ctx, dict(env))
    for decorator in node.decorators:
        outer.eval(decorator.decorator)
    for param in [*node.params.params, *node.params.kwonly_params, *node.params.posonly_params]:
        if param.default is not None:
            outer.eval(param.default)
    declared_return = None
    return_node = None
    if node.returns is not None:
        return_node = node.returns.annotation
        declared_return = single_fact(facts_from_annotation(return_node, ctx))
    flow = FunctionFlow(ctx, flow_env, declared_return, return_node)
    body = node.body
    if isinstance(body, cst.IndentedBlock):
        flow.run(body.body)
    else:
        for small in body.body:
            flow.small_statement(small, None)


def analyse_class(ctx: FileContext, node: cst.ClassDef, env: dict) -> None:
    """`__init__` first: the attributes it builds (`nn.Linear`, `nn.Parameter`, dims from config)
    are what every other method sees through `self`."""
    attributes: dict = {}
    self_fact = SelfFact(attributes)
    methods = []
    class_env = dict(env)
    flow = FunctionFlow(ctx, class_env)
    for statement in node.body.body if isinstance(node.body, cst.IndentedBlock) else []:
        if isinstance(statement, cst.FunctionDef):
            methods.append(statement)
        else:
            flow.statement(statement)
    methods.sort(key=lambda m: m.name.value != "__init__")
    for method in methods:
        is_static = any(dotted_name(d.decorator) in ("staticmethod", "classmethod") for d in method.decorators)
        analyse_function(ctx, method, dict(class_env), None if is_static else self_fact)


def analyse_source(text: str, path: str, config, cli_dims: dict | None = None) -> FileAnalysis:
    """Parse once and analyse the whole file. Raises libcst.ParserSyntaxError on invalid Python."""
    diagnostics: list = []
    pragma_sizes = read_pragmas(text, diagnostics)
    sizes = merge_dim_bindings(config.dims, pragma_sizes, cli_dims or {})
    module = cst.parse_module(text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    imports = build_import_table(module)
    ctx = FileContext(
        path=path, module=module, positions=positions, imports=imports, sizes=sizes,
        default_dtype=config.default_dtype, strict_broadcast=config.broadcast_policy == "strict",
        sequence_dims=tuple(config.sequence_dims), diagnostics=diagnostics,
        primary_framework=_primary_framework(imports),
    )
    _collect_aliases_and_flags(ctx, module)
    module.visit(_FlagFinder(ctx))
    FunctionFlow(ctx, {}).run(module.body)
    for index, site in enumerate(ctx.sites):
        site.id = index
    return FileAnalysis(ctx.sites, ctx.diagnostics, sizes, ctx.flags)
