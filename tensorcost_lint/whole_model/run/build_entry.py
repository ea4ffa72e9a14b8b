"""Contract 7a `build:`: the model object built as the user builds it, by the run's own evaluator.

The expression's names are found as build_names.py says and written as the imports of a module
that exists only as text, in the config's folder (`from timm.models import create_model`, then
`__build__ = create_model("vit_tiny", depth=4)`); that module is read like any file of the tree,
and its one value is evaluated by the run's interpreter — a class called with keywords is built
as the code's constructor builds it, a factory or registry function is followed into the object
it returns. Nothing is imported or run. The object's `entry` method is what the run analyses.
"""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst

from ...analysis.cst_parse import parse_module
from ...analysis.facts import CONFIG, SelfFact
from ...config.build_expressions import free_names, parse_build
from ..source.build_names import NameNotFound, NameSearch
from ..library.library_values import apply_root_setters, config_class_values
from .model_evaluator import ModelEvaluator
from ..python.config_objects import bind_root_config
from ..values.source_error import SourceError

BUILD_NAME = "__build__"
CONFIG_NAME = "config"  # Contract 7a: in `build`, the config built from `dims_from`


class BuildError(SourceError):
    """A `build:` that cannot be followed: one line naming the key (exit 2)."""

    key = "build"


def dims_from_config(run):
    """What `config` means in a build expression: the same value a constructor's `config`
    parameter gets from `dims_from` when the run builds an entry's class (one place, so that a
    config object with its class's methods and properties can replace it here)."""
    return CONFIG


def search_layers(config_folder: Path, config) -> list:
    return [("the config's folder", [config_folder]), ("source_roots", list(config.source_roots)),
            ("site_packages", list(getattr(config, "site_folders", ())))]


class _Rewrite(ast.NodeTransformer):
    """Each name chain of the expression replaced by the local name its import binds."""

    def __init__(self, search: NameSearch) -> None:
        self.search = search
        self.imports: dict = {}  # (module, name) -> the local name bound to it

    def _bind(self, chain: list) -> tuple[str, int]:
        located = self.search.locate(chain)
        key = (located.module, located.name)
        if key not in self.imports:
            local = located.name if located.name not in {n for n in self.imports.values()} else \
                f"{located.name}_{len(self.imports)}"
            self.imports[key] = local
        return self.imports[key], located.consumed

    def visit_Attribute(self, node: ast.Attribute):
        chain, inner = [], node
        while isinstance(inner, ast.Attribute):
            chain.append(inner.attr)
            inner = inner.value
        if not isinstance(inner, ast.Name):
            return self.generic_visit(node)
        chain.append(inner.id)
        chain.reverse()
        if chain[0] == CONFIG_NAME:
            return node
        local, consumed = self._bind(chain)
        rebuilt: ast.expr = ast.Name(local, ast.Load())
        for attribute in chain[consumed:]:
            rebuilt = ast.Attribute(rebuilt, attribute, ast.Load())
        return rebuilt

    def visit_Name(self, node: ast.Name):
        if node.id == CONFIG_NAME:
            return node
        local, _ = self._bind([node.id])
        return ast.Name(local, ast.Load())


def build_module_text(entry, config, config_folder: Path) -> tuple[str, list]:
    """The text of the build's module and the (module, name) pairs it imports."""
    error = _error_for(entry)
    expression = parse_build(entry.build, error)
    if CONFIG_NAME in free_names(expression) and not entry.config_values:
        raise error("`config` is the config read from `dims_from`; this model has no dims_from")
    rewrite = _Rewrite(NameSearch(search_layers(config_folder, config)))
    try:
        rewritten = rewrite.visit(expression)
    except NameNotFound as problem:
        raise error(str(problem)) from None
    lines = [f"from {module} import {name} as {local}\n" if local != name else f"from {module} import {name}\n"
             for (module, name), local in rewrite.imports.items()]
    lines.append(f"{BUILD_NAME} = {ast.unparse(rewritten)}\n")
    return "".join(lines), list(rewrite.imports)


def built_entry(run, entry, config, config_folder: Path):
    """(the built module object, the FunctionRef of its `entry` method)."""
    error = _error_for(entry)
    text, _ = build_module_text(entry, config, config_folder)
    label = "--build" if entry.name == entry.build else f"{Path(entry.path).name}:models.{entry.name}.build"
    path = config_folder / label.replace("/", "_")
    source = run.tree.load_text(path, text)
    if entry.config_values:  # GPT-2's `config.hidden_size` is its `n_embd`: the model file's config class
        for local in source.from_imports:
            found = run.tree.definition(source, local)
            if found is not None:
                bind_root_config(run, found[0])  # the config is an instance of its class (config_objects)
                config_instance = run.instance(CONFIG)
                run.config_names, run.config_defaults = config_class_values(
                    run.tree, found[0], None if config_instance is None else
                    (config_instance.source, config_instance.class_name))
                apply_root_setters(run)  # config.json's fields through their property setters
                break
    value = _evaluate(run, source, text)
    instance = run.instance(value) if type(value) is SelfFact else None
    if instance is None:
        why = "; ".join(dict.fromkeys(reason for _, _, reason in run.unfollowed))[:300]
        if not why and run.undecided_returns:  # `if use_naflex: return ...` read from the environment
            named = ", ".join(f"`{' '.join(c.split())[:60]}`" for c in run.undecided_returns[:3])
            why = f"what it returns depends on {named}, undecided: `assume` gives a value"
        raise error(f"`{entry.build[:80]}` builds no module object of the analysed code"
                    + (f" ({why})" if why else " (its value is not known statically)"))
    method = run.method_of(value, entry.qualname)
    if method is None:
        raise error(f"the built {instance.class_name} has no method {entry.qualname!r} (entry)")
    run.assign_paths(value)
    return value, method


def _evaluate(run, source, text: str):
    """The build's value, by the run's evaluator; what building computes costs nothing we count."""
    try:
        module = parse_module(text)
    except cst.ParserSyntaxError as problem:  # pragma: no cover - the text was checked and unparsed
        raise SourceError(f"build: {problem}") from None
    statement = module.body[-1]
    node = statement.body[0].value
    source.ctx.add_piece(module, 0)
    evaluator = ModelEvaluator(source.ctx, {CONFIG_NAME: dims_from_config(run)}, run=run, source=source)
    with run.collecting([]):
        return evaluator.eval(node)


def _error_for(entry):
    def error(reason: str) -> BuildError:
        return BuildError(reason)
    return error
