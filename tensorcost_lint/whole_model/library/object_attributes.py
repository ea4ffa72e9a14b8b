"""Python's own attribute lookup on an object the run knows — `object.__getattribute__`, apart from
any `__getattribute__` a class of the tree defines — and the object's `__dict__`.

A mixin's `super().__getattribute__(key)` (`try: return super().__getattribute__(key) except
AttributeError: return default`) reads the attribute as Python's default lookup does: the run
never runs a class's own `__getattribute__`, so this is the attribute the run reads, except that a
config's attribute_map does not rename the key (that renaming is the class's `__getattribute__`).
An attribute the object certainly lacks is an AttributeError (try_paths takes the handler): a
config read from config.json lacks what neither the JSON, its class chain nor the code gave it;
any other object lacks what attribute_presence says it does not hold.

`obj.__dict__` is the object's own attributes: `.get(k, default)` reads one, `.pop(k, default)`
removes it from the object itself (`copy.__dict__.pop("_spec", None)` on a copy of the config leaves
the original as it was). A name the run cannot tell is there or not reads as unknown; a config
field of config.json is not removed (unknown), as the run keeps those fields apart."""

from __future__ import annotations

from ..values.identity import Pair
from ...analysis.facts import CONFIG, ModuleFact, SelfFact, StringFact
from ...analysis.interpreter import UNHANDLED
from ..python import attribute_presence, callable_values, config_copies
from ..values.library_objects import InstanceDict
from ..values.objects import NONE
from . import library_values, norm_buffers


def own_lookup(run, receiver, name: str):
    """`obj.name` read here: the config's attributes and a copy's (what the code set on the copy,
    else the config's), `obj.__dict__`; UNHANDLED for any other read."""
    if name == "__dict__" and instance_dict(run, receiver) is not None:
        return instance_dict(run, receiver)
    if receiver is CONFIG:
        return config_read(run, CONFIG, name)
    if config_copies.is_config_copy(run, receiver):
        return receiver.attributes[name] if name in receiver.attributes else config_read(run, receiver, name)
    buffer = norm_buffers.attribute(run, receiver, name) if type(receiver) is ModuleFact else UNHANDLED
    if buffer is not UNHANDLED:  # `bn.running_mean`, `self.momentum` of a batch norm torch built
        return buffer
    if name == "__name__":
        return callable_values.class_name(receiver)  # `norm_layer.__name__.lower()` picks a layer by name
    return callable_values.partial_attribute(receiver, name)  # `norm_layer.keywords` of a partial


def config_read(run, owner, name: str):
    """`config.name` (or a copy's field the code did not set on it); a name the config does not
    hold reads as the dim of its name, as before, but may have raised."""
    if not library_values.config_has(run, name, owner):
        run.doubt()  # Python may raise AttributeError here
    return library_values.config_attribute(run, name, owner=owner)


def _is_config(run, owner) -> bool:
    return owner is CONFIG or config_copies.is_config_copy(run, owner)


def lacks(run, owner, name: str, plain: bool):
    """True when `owner` certainly has no attribute `name` (reading it raises AttributeError), False
    when it certainly has, None when the run cannot tell. `plain`: Python's own lookup, which no
    attribute_map renames."""
    if _is_config(run, owner):
        own = run.config_state.attributes if owner is CONFIG else owner.attributes
        if name in own or "config." + name in run.assume or "self.config." + name in run.assume:
            return False  # set by the code, or by `assume` (which config_attribute reads)
        if not run.config_values or run.instances.get(id(CONFIG)) is None or plain and name in run.config_names:
            return None  # a config not read from config.json, or a name its attribute_map renames
        return not library_values.config_has(run, name, owner)
    if type(owner) is not SelfFact:
        return None
    present = attribute_presence.has_attribute(run, owner, name)
    return None if present is None else not present.value


def plain_attribute(interp, owner, name: str):
    """`object.__getattribute__(owner, name)`: the attribute's value; None (and a doubt) when the
    object lacks it or the run cannot tell."""
    run = interp.run
    if lacks(run, owner, name, plain=True) is not False:
        run.doubt()
        return None
    if _is_config(run, owner):
        if owner is not CONFIG and name in owner.attributes:
            return owner.attributes[name]
        return library_values.config_attribute(run, name, owner=owner, aliased=False)
    return interp.attribute_of(owner, name)


def instance_dict(run, owner):
    """`owner.__dict__` of a config or an object of the tree; None for anything else."""
    if _is_config(run, owner) or type(owner) is SelfFact and run.instances.get(id(owner)) is not None:
        return InstanceDict(owner)
    return None


def dict_method(interp, view: InstanceDict, method: str, args):
    """`obj.__dict__.get(k, d)` / `.pop(k, d)` with a known key; UNHANDLED for other methods."""
    if method not in ("get", "pop") or args.keywords or args.starred or len(args.positional) not in (1, 2):
        return UNHANDLED
    run = interp.run
    key = interp.eval(args.positional[0])
    default = interp.eval(args.positional[1]) if len(args.positional) == 2 else None
    if type(key) is not StringFact:
        return None
    owner, name = view.owner, key.value
    own = run.config_state.attributes if owner is CONFIG else owner.attributes
    held = _held(run, owner, name)
    if held is None or held and name not in own or not held and method == "pop" and len(args.positional) == 1:
        run.doubt()  # not known to be there, a config.json field, or a KeyError
        return None
    if not held:
        return default if len(args.positional) == 2 else NONE
    return own.pop(name) if method == "pop" else own[name]


def _held(run, owner, name: str):
    """Whether the object's `__dict__` holds `name`: True, False, or None (cannot tell)."""
    if owner is CONFIG or config_copies.is_config_copy(run, owner):
        own = run.config_state.attributes if owner is CONFIG else owner.attributes
        if name in own:
            return True
        if name in run.config_values and name not in run.config_setter_fields:
            return True  # config.json's field (a setter's field is the property's, not the dict's)
        return False if run.config_values and run.instances.get(id(CONFIG)) is not None else None
    if name in owner.attributes:
        return None if Pair((owner, name)) in run.maybe_attributes else True
    return False if attribute_presence.holds_every_attribute(run, owner) else None

