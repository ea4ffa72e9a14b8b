"""Registries: module-level objects that map string keys to functions or classes
(`ALL_ATTENTION_FUNCTIONS.get_interface(key, eager_attention_forward)`, `ACT2FN[config.hidden_act]`,
a plain dict such as `LLAMA_ATTENTION_CLASSES[config._attn_implementation]`), or to literals (a
plain dict `KIND_WIDTHS = {"wide": 24}`: the number, string or bool it holds).

A lookup with a key the analysis knows (a string from the config, or one `assume` gives) returns
the registered value, read from the dict literal the registry is built from (its class's
`_global_mapping`, or the dict passed to its constructor). A lookup with an unknown key that
names a default (`get_interface(key, default)`, `get(key, default)`) returns the code's default;
one with no default is unknown."""

from __future__ import annotations

import ast

from shape_annotations import Const

from ...analysis.calls import SHAPE_PRESERVING_MODULES
from ...analysis.facts import DimFact, ModuleFact, StringFact
from ..values.decorated_registries import decorated_entries
from ..values.library_objects import IntFact, MappingFact, RegistryRef, TorchFunction
from ..values.mapping_keys import ClassKey
from ..values.objects import NONE, BoolFact, ClassRef, FunctionRef

_LOOKUP_METHODS = ("get_interface", "get")


def registry(run, source, name: str):
    """The RegistryRef `name` means in `source`, or None."""
    found = run.tree.global_value(source, name)
    if found is None:
        return None
    home, value = found
    if _changed(source, name) or _changed(home, name):
        return None  # `TABLE["k"] = v`, `TABLE.update(...)` at the top of a module: read in order (module_order)
    if isinstance(value, ast.Dict):  # `LLAMA_ATTENTION_CLASSES = {"eager": LlamaAttention, ...}`
        return RegistryRef(home, name, None, tuple(_items(value, home) + _class_items(run, value, home)
                                                   + _decorated(run, home, name)), False)
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return None
    mapping = None
    instantiates = False
    cls = run.tree.class_ast(home, value.func.id)
    if cls is not None:
        cls_source, cls_node = cls
        for statement in cls_node.body:
            if isinstance(statement, (ast.Assign, ast.AnnAssign)) and isinstance(statement.value, ast.Dict):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                if any(isinstance(t, ast.Name) and t.id == "_global_mapping" for t in targets):
                    mapping = _items(statement.value, cls_source)
            if isinstance(statement, ast.FunctionDef) and statement.name == "__getitem__":
                instantiates = any(isinstance(s, ast.Return) and isinstance(s.value, ast.Call)
                                   for s in ast.walk(statement))
    if mapping is None and value.args:
        first = value.args[0]
        if isinstance(first, ast.Dict):
            mapping = _items(first, home)
        elif isinstance(first, ast.Name) and first.id in home.values and isinstance(home.values[first.id], ast.Dict):
            mapping = _items(home.values[first.id], home)
    if mapping is None:
        return None
    return RegistryRef(home, name, cls, tuple(mapping), instantiates)


def _changed(source, name: str) -> bool:
    """Whether the module changes or rebinds its top-level `name` after binding it."""
    events = source.timeline.get(name, ())
    return any(kind == "change" for _, kind, _ in events) or sum(kind == "assign" for _, kind, _ in events) > 1


def _decorated(run, home, name: str) -> list:
    """The entries decorators of `home` add to its table `name` at import time, read once per run."""
    held = run.decorated_tables
    key = (str(home.path), name)
    if key not in held:
        held[key] = decorated_entries(run, home, name)
    return held[key]


def _items(node: ast.Dict, source) -> list:
    return [(key.value, value, source) for key, value in zip(node.keys, node.values)
            if isinstance(key, ast.Constant) and isinstance(key.value, str)]


def _class_items(run, node: ast.Dict, source) -> list:
    """The entries keyed by a class of the tree (`{LayerConfig: build_layer}`), the key a ClassKey."""
    found = []
    for key, value in zip(node.keys, node.values):
        definition = run.tree.definition(source, key.id) if isinstance(key, ast.Name) else None
        if definition is not None and type(definition[1]).__name__ == "ClassDef":
            found.append((ClassKey(ClassRef(*definition)), value, source))
    return found


def lookup(run, interp, registry_ref: RegistryRef, key_fact):
    """`registry[key]`: the registered value for a known key (a string, or a class of the tree:
    `HANDLERS[type(config)](config)`), else None (unknown)."""
    if type(key_fact) is StringFact:
        wanted = key_fact.value
    elif type(key_fact) is ClassRef:
        wanted = ClassKey(key_fact)
    else:
        return None
    for key, value, source in registry_ref.mapping:
        if key == wanted:
            return _value(run, interp, registry_ref, value, source)
    return None


def call_lookup(run, interp, registry_ref: RegistryRef, method: str, args):
    """`registry.get_interface(key, default)`: the registered value, or the code's default when the
    key is unknown or not registered."""
    if method not in _LOOKUP_METHODS:
        return None
    key = interp.eval(args.get(0))
    default_node = args.get(1, "default")
    found = lookup(run, interp, registry_ref, key)
    default = interp.eval(default_node) if default_node is not None else None
    return found if found is not None else default


def _value(run, interp, registry_ref, node, source):
    if isinstance(node, ast.Constant) and not registry_ref.instantiates:
        return constant_fact(run, node.value)  # `KIND_WIDTHS = {"wide": 24}`: a table of numbers or strings
    if isinstance(node, ast.Tuple) and node.elts:  # `(ClippedGELUActivation, {"min": -10})`
        node = node.elts[0]
    resolved = None
    if isinstance(node, ast.Name):
        found = run.tree.definition(source, node.id)
        if found is not None:
            home, definition = found
            resolved = ClassRef(home, definition) if type(definition).__name__ == "ClassDef" \
                else FunctionRef(home, definition)
        elif run.tree.global_value(source, node.id) is not None and not registry_ref.instantiates:
            # `{"gelu": gelu_new}` of a module-level `gelu_new = get_activation("gelu_new")`: its value
            return run.module_value(source, node.id)
        else:
            dotted = source.ctx.settings.imports.resolve_text(node.id)
            resolved = TorchFunction(dotted) if dotted else None
    elif isinstance(node, ast.Attribute):
        dotted = source.ctx.settings.imports.resolve_text(ast.unparse(node))
        resolved = TorchFunction(dotted) if dotted else None
    if resolved is None:
        return None
    if not registry_ref.instantiates:
        return resolved
    # the registry builds what it holds (`ACT2FN[...]` returns `cls()`)
    name = resolved.name if type(resolved) is TorchFunction else resolved.node.name.value
    if name.rsplit(".", 1)[-1] in SHAPE_PRESERVING_MODULES:  # recorded: it holds no parameter (memory_parameters)
        return run.parameters.constructed(run, None, name.rsplit(".", 1)[-1], None, ModuleFact("preserve"))
    if type(resolved) is ClassRef:
        return run.build(resolved.source, resolved.node, [], {}, read_missing_as_dims=False)
    return None


def constant_fact(run, value):
    """The fact of a Python literal a module-level table or a class body holds (None: not a literal
    the run reads)."""
    if value is None:
        return NONE
    if type(value) is bool:
        return BoolFact(value)
    if type(value) is str:
        return StringFact(value)
    if type(value) is int:
        return DimFact(Const(value)) if value >= 1 else IntFact(value)
    if type(value) is float:
        return run.floats.make(value)
    return None


def mapping_attribute(run, interp, registry_ref: RegistryRef, name: str):
    """`registry._global_mapping`, the class-level dict the registry was read from: a known mapping
    (`config._attn_implementation not in ALL_MASK_ATTENTION_FUNCTIONS._global_mapping`), its values
    the registered functions (a registry that builds what it holds gives them unknown)."""
    if name != "_global_mapping" or registry_ref.cls is None:
        return None
    return MappingFact(tuple((key, None if registry_ref.instantiates else _value(run, interp, registry_ref, value, source))
                             for key, value, source in registry_ref.mapping))
