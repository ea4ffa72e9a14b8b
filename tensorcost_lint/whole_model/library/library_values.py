"""Reading library-style values in a whole-model run: `config.x` from the entry's `dims_from`
JSON, `getattr(obj, "x", default)`, and `assume`d values (`isinstance` is python/data_instances.py). Output
records (HF `ModelOutput` dataclasses) built, read by attribute and indexed are output_records.py."""

from __future__ import annotations

from shape_annotations import Const, Sym

from ...analysis.facts import CONFIG, DimFact, ScalarFact, SelfFact, SequenceFact, StringFact
from ..python import class_members, config_copies
from ..python.config_objects import apply_setters, config_class, setter_fields
from ..values.library_objects import IntFact, MappingFact, RecordFact
from ..values.objects import NONE, BoolFact, Instance, ModuleRef

_MISSING = object()


MAX_JSON_ITEMS = 4096  # a config list longer than this stays unknown (bounded work)
# `attention_dropout: 0.0` in a config.json: a number whose value memory_activations needs (dropout
# at p=0 saves nothing), recognised by identity so no other reader of a ScalarFact changes
ZERO_FLOAT = ScalarFact()


def json_fact(name: str, value, sizes, floats=None):
    """The fact of one config.json value; integers are dims of their field's name; with `floats`
    (the run's known_floats.FloatValues), a float keeps its value (0.0 is ZERO_FLOAT)."""
    if value is None:
        return NONE
    if type(value) is bool:
        return BoolFact(value)
    if type(value) is int:
        if value >= 1 and sizes.get(name) == value:
            return DimFact(Sym(name))
        return IntFact(value) if value <= 0 else DimFact(Const(value))
    if type(value) is float:
        if value == 0:
            return ZERO_FLOAT  # a 0.0 dropout probability is read by identity
        return floats.make(value) if floats is not None else ScalarFact()
    if type(value) is str:
        return StringFact(value, f"config.{name}")
    if type(value) is dict:
        return MappingFact(tuple((key, json_fact(key, item, {}, floats)) for key, item in value.items()
                                 if isinstance(key, str)))
    if type(value) is list and len(value) <= MAX_JSON_ITEMS:  # `layer_types: ["full_attention", ...]`
        return SequenceFact(tuple(json_fact(name, item, {}, floats) for item in value))
    return None


def config_class_values(tree, source, config_class=None) -> tuple[dict, dict]:
    """(attribute_map, class-level defaults) of the config classes a file imports (`from
    .configuration_gpt2 import GPT2Config`) and their bases: GPT-2's `config.hidden_size` is its
    `n_embd`; a field config.json leaves out (`chunk_size_feed_forward: int = 0` in
    `PreTrainedConfig`) has its class default. With `config_class` ((file, name): the class of the
    JSON's model_type, config_objects), that class and its bases first."""
    import ast

    aliases, defaults = {}, {}
    pending = [(source, name) for name in source.from_imports if name.endswith("Config")]
    if config_class is not None:
        pending.insert(0, config_class)
    seen = set()
    while pending and len(seen) < 32:
        home, name = pending.pop(0)
        found = tree.class_ast(home, name)
        if found is None or id(found[1]) in seen:
            continue
        seen.add(id(found[1]))
        class_source, cls = found
        pending.extend((class_source, base.id) for base in cls.bases
                       if isinstance(base, ast.Name) and base.id.endswith("Config"))
        for statement in cls.body:
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Dict) and any(
                    isinstance(t, ast.Name) and t.id == "attribute_map" for t in statement.targets):
                for key, value in zip(statement.value.keys, statement.value.values):
                    if isinstance(key, ast.Constant) and isinstance(value, ast.Constant) \
                            and isinstance(key.value, str) and isinstance(value.value, str):
                        aliases.setdefault(key.value, value.value)
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                    and isinstance(statement.value, ast.Constant):
                defaults.setdefault(statement.target.id, statement.value.value)
            elif isinstance(statement, ast.FunctionDef) and statement.name in ("__init__", "__post_init__"):
                for name, value in _init_defaults(statement).items():
                    defaults.setdefault(name, value)
    return aliases, defaults


def _init_defaults(init) -> dict:
    """Defaults a config's `__init__` gives its attributes (transformers 4.x): `self.x = x` of a
    parameter with a constant default, and `self.x = kwargs.pop("x", constant)`."""
    import ast

    arguments = init.args
    positional = [*arguments.posonlyargs, *arguments.args]
    parameters = {a.arg: d.value for a, d in zip(positional[len(positional) - len(arguments.defaults):],
                                                  arguments.defaults) if isinstance(d, ast.Constant)}
    parameters.update({a.arg: d.value for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)
                       if isinstance(d, ast.Constant)})
    found = {}
    for statement in init.body:
        if isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value  # `self._x: bool | None = kwargs.pop(...)`
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        else:
            continue
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
            continue
        if isinstance(value, ast.Name) and value.id in parameters:
            found[target.attr] = parameters[value.id]
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "pop" \
                and len(value.args) == 2 and all(isinstance(a, ast.Constant) for a in value.args) \
                and isinstance(value.args[0].value, str):
            key = value.args[0].value  # `self._output_attentions = kwargs.pop("output_attentions", False)`
            found[target.attr] = value.args[1].value if key == target.attr else Popped(key, value.args[1].value)
    return found


class Popped:
    """An attribute a config's constructor sets from another keyword (`self._x = kwargs.pop("x",
    default)`): config.json's `x` when it holds it, else the default."""

    __slots__ = ("key", "default")

    def __init__(self, key: str, default) -> None:
        self.key, self.default = key, default


def config_attribute(run, name: str, default=_MISSING, owner=CONFIG, aliased: bool = True):
    """`config.name`: what the code assigned on it, else the config.json value; a field the file
    does not hold is the dim of its name (declared in `dims:`), or `default` for `getattr(config,
    name, default)`. `owner` is the object read: the config, or a copy of it (config_copies) whose
    own attributes the caller read — its properties and methods run on it. `aliased=False`: the
    name as Python's own lookup reads it, not through the class's attribute_map."""
    # `assume: {self.config._attn_implementation: eager}` sets the config's field, so it holds
    # wherever the config object travels (`config._attn_implementation` in a helper's own file)
    assumed = run.assume.get("config." + name, run.assume.get("self.config." + name, _MISSING))
    if assumed is not _MISSING:
        return _assumed_fact(run, assumed)
    values = run.config_values
    if name not in values and aliased:
        name = run.config_names.get(name, name)
    own = run.config_state.attributes if owner is CONFIG else {}
    if name in own:
        return own[name]
    instance = run.instances.get(id(owner))
    if name in run.config_setter_fields and instance is not None:
        # config.json's value went to the property's setter when the config was built: reading
        # the name runs its getter, as Python's property wins over the instance's attributes
        return class_members.read_property(run, instance, name)
    if name in values:  # what `to_dict()` wrote of the attribute: its value, a property's too
        if type(values[name]) is dict and type(values[name].get("model_type")) is str:
            made = sub_config(run, name, values[name])
            if made is not None:
                return made
        return json_fact(name, values[name], run.sizes, run.floats)
    if instance is not None:  # a property of its class runs (it wins over class attributes, as in Python)
        found = class_members.read_property(run, instance, name, _MISSING)
        if found is not _MISSING:
            return found
    if name in run.config_defaults and values:
        default = run.config_defaults[name]
        if type(default) is Popped:
            return json_fact(default.key, values.get(default.key, default.default), run.sizes, run.floats)
        return json_fact(name, default, run.sizes, run.floats)
    if instance is not None:
        method = run.method_of(owner, name)  # `config.get_text_config`: bound to the config
        if method is not None:
            return method
        constant = class_members.class_constant(run, instance, name, _MISSING)
        if constant is not _MISSING:  # `default_rope_type = "default"` in a class body, read as Python reads it
            return constant
    if default is not _MISSING and values:
        return default
    return DimFact(Sym(name))


def apply_root_setters(run) -> None:
    """config.json's fields whose property setter runs when the config is built (config_objects),
    run once the config's class and attribute_map are known. The names are marked first: from the
    class statement on, Python reads the property's getter, not config.json's value, setters too."""
    if run.config_setter_fields:
        return
    fields = setter_fields(run, CONFIG, run.config_values)
    run.config_setter_fields.update(fields)
    apply_setters(run, CONFIG, {name: run.config_values[name] for name in fields},
                  lambda key, item: json_fact(key, item, run.sizes, run.floats))


def sub_config(run, name: str, value: dict):
    """`config.text_config` where config.json holds a sub-config's own `to_dict()` (it names its
    `model_type`, as every config's does): an object of that model type's config class holding the
    dict's fields, its attribute_map's names read through to them and its class defaults for the
    fields the dict leaves out, as the parent config's constructor builds it from the dict. Made
    once per run; None when no class of that model type is found (the dict is read as a dict)."""
    made = run.sub_configs
    if name not in made:
        made[name] = None
        root = run.instances.get(id(CONFIG))
        found = config_class(run, root.source, value["model_type"]) if root is not None else None
        if found is not None:
            home, cls = found
            aliases, defaults = config_class_values(run.tree, home, (home, cls.name.value))
            fields = {key: item for key, item in value.items() if isinstance(key, str)}
            for key, default in defaults.items():
                if key not in fields:
                    fields[key] = fields.get(default.key, default.default) if type(default) is Popped else default
            for alias, field in aliases.items():
                if field in fields and alias not in fields:
                    fields[alias] = fields[field]
            # an assumed config field (`self.config._attn_implementation: eager`) holds for the config
            # and for every sub-config read from it
            assumed = {key.split(".")[-1]: value for key, value in run.assume.items()
                       if key.startswith(("config.", "self.config.")) and key.count(".") == key.startswith("self.") + 1}
            fact = SelfFact({key: sub_config(run, f"{name}.{key}", item) or json_fact(key, item, {}, run.floats)
                             if type(item) is dict and type(item.get("model_type")) is str
                             else json_fact(key, item, {}, run.floats) for key, item in fields.items()})
            fact.attributes.update({key: _assumed_fact(run, value) for key, value in assumed.items()})
            run.sub_config_objects.add(fact)
            run.instances[id(fact)] = Instance(home, cls, fact)
            through_setters = {key: value[key] for key in setter_fields(run, fact, value)}
            for key in through_setters:  # its setter stores it; the getter reads it back
                fact.attributes.pop(key, None)
            apply_setters(run, fact, through_setters, lambda key, item: json_fact(key, item, {}, run.floats))
            made[name] = fact
    return made[name]


def config_has(run, name: str, owner=CONFIG) -> bool:
    """`hasattr(config, name)` for a config read from config.json and its class (a field, a class
    attribute, a method or property of its class chain, an attribute the code assigned on it)."""
    if name in run.config_values or name in run.config_defaults or run.config_names.get(name) in run.config_values:
        return True
    if owner is CONFIG and name in run.config_state.attributes:
        return True
    instance = run.instances.get(id(CONFIG))
    return instance is not None and class_members.class_binds(run, instance, run.config_names.get(name, name))


def getattr_call(run, interp, args):
    """`getattr(obj, "name", default)` with a literal name."""
    if len(args.positional) not in (2, 3) or args.keywords or args.starred:
        return None
    owner = interp.eval(args.positional[0])
    name = interp.eval(args.positional[1])
    has_default = len(args.positional) == 3
    if type(name) is not StringFact:
        if has_default:
            interp.eval(args.positional[2])
        return None
    reader = CONFIG
    if config_copies.original(run, owner, name.value) is not None:
        reader, owner = owner, CONFIG  # a copy of the config, a field the code did not assign on it
    if owner is CONFIG:
        field = name.value if name.value in run.config_values else run.config_names.get(name.value, name.value)
        if has_default and field not in run.config_values and field not in run.config_defaults and run.config_values \
                and not config_has(run, field, reader):
            return interp.eval(args.positional[2])
        if has_default:
            interp.walk(args.positional[2])
        return config_attribute(run, name.value, owner=reader)
    if type(owner) is SelfFact and name.value in owner.attributes:
        if has_default:
            interp.walk(args.positional[2])
        return owner.attributes[name.value]
    if type(owner) is SelfFact and run.instance(owner) is not None:  # its class's attribute, property, method
        found = interp.attribute_of(owner, name.value)
        if found is not None or class_members.class_binds(run, run.instance(owner), name.value):
            if has_default:
                interp.walk(args.positional[2])
            return found
        if has_default:
            from ..python.attribute_presence import has_attribute
            if has_attribute(run, owner, name.value) == BoolFact(False):
                return interp.eval(args.positional[2])
    if type(owner) is ModuleRef:  # `getattr(module, class_name)`: what the module binds to the name
        found = interp.attribute_of(owner, name.value)
        if found is not None or not has_default:
            if has_default:
                interp.walk(args.positional[2])
            return found
    if type(owner) is RecordFact:
        found = owner.attribute(name.value)
        return found if found is not None or not has_default else interp.eval(args.positional[2])
    if has_default:
        interp.eval(args.positional[2])
    return None


def assumed_value(run, ctx, node):
    """The value `assume` gives an expression (`self.config._attn_implementation: sdpa`), or None."""
    text = " ".join(ctx.code(node).split())
    if text not in run.assume:
        return None
    return _assumed_fact(run, run.assume[text])


def _assumed_fact(run, value):
    if type(value) is bool:
        return BoolFact(value)
    if type(value) is int:
        return DimFact(Const(value)) if value >= 1 else IntFact(value)
    if type(value) is float:  # `config.dropout: 0.1`: a float the run knows
        return ZERO_FLOAT if value == 0 else run.floats.make(value)
    return StringFact(value, "`assume`")  # a config file's string: never echoed into a message (issue 22)
