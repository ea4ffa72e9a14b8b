"""The config object a whole-model run reads from `dims_from` as an instance of the architecture's
config class: its attributes are config.json's fields, and its class chain — found from the JSON's
`model_type`, read as text — gives it the methods, properties and class attributes Python would
(`config.get_text_config(decoder=True)`, `config.per_layer_config`, `attribute_map`).

The class is the one whose `model_type` class attribute equals the JSON's: among the config
classes the entry's file imports, else through the package's own auto mapping (a module-level
`CONFIG_MAPPING_NAMES` of `(model_type, class name)` pairs, read with `ast`, never imported) and
the package's layout for the class's file. No class found: the config is read as before (its
fields and the dims of their names), and its methods are not followed.

What the code assigns on the config (`config._spec = spec` in a setter, `self.config.x = v`) is
the config's own attribute from then on, read before config.json's field of that name, as Python
reads the instance's `__dict__`; a name its class binds to a property with a setter runs the
setter instead (`obj.x = v` runs it).

config.json's fields reach the config as its constructor gives them: a class whose `__init__` sets
each field with `setattr(self, key, value)` runs a property's setter for a field its chain binds
to a property with one (`per_layer_config = {"1": {...}}` is validated and stored by the setter and
read back through the getter: a view, not the dict). The config read from `dims_from` holds the
values without running its constructor, so those setters run once, when it is bound, in the order
config.json lists the fields (apply_setters; a sub-config read from a nested dict too). What a
setter computes costs nothing, as a constructor's work; what it cannot decide stays undecided in
what its getter returns."""

from __future__ import annotations

import ast
from pathlib import Path

from ...analysis.facts import CONFIG
from . import class_members
from ..values.objects import Instance
from ..values.source_error import SourceError

# Where a package keeps its model-type -> config-class mapping, relative to the package root, and
# where a model type's files live (`models/<module>/configuration_<module>.py`); the special names
# map a model type to its module when they differ (`SPECIAL_MODEL_TYPE_TO_MODULE_NAME`).
AUTO_MAPPING_FILES = ("models/auto/auto_mappings.py", "models/auto/configuration_auto.py")
MAPPING_NAME = "CONFIG_MAPPING_NAMES"
MODULE_NAMES = "SPECIAL_MODEL_TYPE_TO_MODULE_NAME"
PACKAGE_SEARCH_DEPTH = 6  # folders above the entry's file searched for the package root


def bind_root_config(run, source) -> None:
    """Make the run's config (CONFIG) an instance of its config class, when one is found."""
    model_type = run.config_values.get("model_type")
    if type(model_type) is not str:
        return
    found = config_class(run, source, model_type)
    if found is not None:
        home, cls = found
        run.instances[id(CONFIG)] = Instance(home, cls, CONFIG)


def assign_attribute(run, name: str, value, node=None) -> None:
    """`config.name = value` on the root config (run.config_state holds what the code assigned)."""
    instance = run.instances.get(id(CONFIG))
    setter = class_members.property_setter(run, instance, name) if instance is not None else None
    if setter is not None:
        run._invoke(setter, [value], {}, node)
    elif instance is None or class_members.property_getter(run, instance, name) is None:
        # (a property with no setter: Python raises AttributeError, the config is unchanged)
        run.config_state.attributes[name] = value


def apply_setters(run, owner, fields: dict, fact_of) -> list:
    """Run the setter of each field of `fields` (name -> JSON value) that `owner`'s class chain binds
    to a property with one, on `fact_of(name, value)`; the names whose setter ran, in order."""
    instance = run.instances.get(id(owner))
    if instance is None:
        return []
    ran = []
    for name, value in fields.items():
        setter = class_members.property_setter(run, instance, name) if isinstance(name, str) else None
        if setter is None:
            continue
        ran.append(name)
        run.building += 1
        try:
            with run.collecting([]):  # building costs nothing we count
                run._invoke(setter, [fact_of(name, value)], {}, None)
        finally:
            run.building -= 1
    return ran


def setter_fields(run, owner, fields) -> list:
    """The names of `fields` that `owner`'s class chain binds to a property with a setter."""
    instance = run.instances.get(id(owner))
    return [] if instance is None else [
        name for name in fields if isinstance(name, str) and class_members.property_setter(run, instance, name) is not None]


def config_class(run, source, model_type: str):
    """(file, cst.ClassDef) of the config class of `model_type`, or None."""
    for name in source.from_imports:
        if not name.endswith("Config"):
            continue
        found = run.tree.class_ast(source, name)
        if found is not None and _model_type(found[1]) == model_type:
            return _definition(run, found[0], found[1].name)
    return _from_auto_mapping(run, Path(source.path), model_type)


def _model_type(node: ast.ClassDef):
    for statement in node.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else \
            [statement.target] if isinstance(statement, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "model_type" for t in targets) \
                and isinstance(statement.value, ast.Constant):
            return statement.value.value
    return None


def _definition(run, home, name: str):
    definition = home.definitions.get(name)
    return None if definition is None else (home, definition)


def _from_auto_mapping(run, start: Path, model_type: str):
    for folder in list(start.parents)[:PACKAGE_SEARCH_DEPTH]:
        for relative in AUTO_MAPPING_FILES:
            mapping_file = folder / relative
            if not mapping_file.is_file():
                continue
            try:
                mapping = run.tree.load(mapping_file)
            except SourceError:
                continue
            names = _pairs(mapping.values.get(MAPPING_NAME))
            if model_type not in names:
                continue
            module = _pairs(mapping.values.get(MODULE_NAMES)).get(model_type, model_type.replace("-", "_"))
            return _class_in_module(run, folder / "models" / module, names[model_type], model_type)
    return None


def _pairs(value) -> dict:
    """The (str, str) pairs of `OrderedDict([("llama", "LlamaConfig"), ...])`."""
    if isinstance(value, ast.Call) and value.args and isinstance(value.args[0], (ast.List, ast.Tuple)):
        value = value.args[0]
    if not isinstance(value, (ast.List, ast.Tuple)):
        return {}
    pairs = {}
    for item in value.elts:
        if isinstance(item, ast.Tuple) and len(item.elts) == 2 and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in item.elts):
            pairs.setdefault(item.elts[0].value, item.elts[1].value)
    return pairs


def _class_in_module(run, folder: Path, name: str, model_type: str):
    candidates = [folder / f"configuration_{folder.name}.py"]
    if folder.is_dir():
        candidates.extend(sorted(p for p in folder.glob("configuration_*.py") if p not in candidates))
    for file in candidates:
        if not file.is_file():
            continue
        try:
            home = run.tree.load(file)
        except SourceError:
            continue
        node = home.classes.get(name)
        if node is not None and _model_type(node) == model_type:
            return _definition(run, home, name)
    return None
