"""`copy.deepcopy(config)` / `copy.copy(config)`: a config object of its own, as Python makes it.

Code derives per-layer configs from the model's (`theta_config = copy.deepcopy(config)` then
`theta_config.rope_parameters = {**config.rope_parameters, "rope_theta": theta}` for a rotary
embedding per base frequency). The copy is an object whose attributes are what the code assigned
on it; every other attribute reads as the config it was copied from reads it (config.json's value,
its class's property or default, `hasattr`), since a deep copy holds equal values. Assigning on the
copy never changes the original. Copies of other values: a plain value (a number, a string, a
tuple, a dict the run knows, None) is an equal value the run already treats as immutable; an object
of a plain class of the tree (deriving from `object` only) is a new object of its class with its
attributes (a deep copy copies the plain objects it holds too, each once); a tensor, a module or
any other object is not modelled (unknown)."""

from __future__ import annotations

from ...analysis.facts import CONFIG, DimFact, ScalarFact, SelfFact, SequenceFact, StringFact
from ...analysis.interpreter import UNHANDLED
from ..values.library_objects import IntFact, MappingFact
from ..values.inheritance import plain_class
from ..values.objects import NONE, BoolFact, Instance

_PLAIN = (ScalarFact, DimFact, IntFact, BoolFact, StringFact, SequenceFact, MappingFact)
MAX_COPIES = 10_000  # config copies per run: one per layer or frequency in real code


def deepcopy_call(interp, args):
    """`copy.deepcopy(x)`."""
    return _copy(interp, args, deep=True)


def copy_call(interp, args):
    """`copy.copy(x)`."""
    return _copy(interp, args, deep=False)


def _copy(interp, args, deep: bool):
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    value = interp.eval(args.positional[0])
    run = interp.run
    if value is CONFIG or is_config_copy(run, value):
        return _config_copy(run, value)
    if value is NONE or type(value) in _PLAIN:
        return value  # facts are values: an equal one, never changed in place
    if _plain_object(run, value):
        return _object_copy(run, value, deep, {})
    return None


def is_config_copy(run, value) -> bool:
    return type(value) is SelfFact and id(value) in run.config_copies


def original(run, value, name: str):
    """The config an attribute of a copy reads through (CONFIG) when the code assigned no such
    attribute on the copy; None otherwise."""
    if is_config_copy(run, value) and name not in value.attributes:
        return CONFIG
    return None


def _config_copy(run, value):
    if len(run.config_copies) >= MAX_COPIES:
        return None
    # the copy holds what the original holds: a copy's attributes, or what the code assigned on the config
    copied = SelfFact(dict(value.attributes if type(value) is SelfFact else run.config_state.attributes))
    run.config_copies[id(copied)] = copied  # kept alive: ids stay unique
    instance = run.instances.get(id(CONFIG))
    if instance is not None:  # its class's methods and properties run on the copy
        run.instances[id(copied)] = Instance(instance.source, instance.cls, copied)
    return copied


def _plain_object(run, value) -> bool:
    instance = run.instances.get(id(value)) if type(value) is SelfFact else None
    return instance is not None and value not in run.paths and plain_class(run, instance.source, instance.cls)


def _object_copy(run, value, deep: bool, memo: dict):
    """A new object of the value's class with its attributes; deep: the plain objects it holds
    copied too, each once (`memo`, as copy.deepcopy keeps shared objects shared)."""
    if id(value) in memo:
        return memo[id(value)]
    if len(memo) >= MAX_COPIES:
        return None
    instance = run.instances[id(value)]
    copied = SelfFact({})
    memo[id(value)] = copied
    run.instances[id(copied)] = Instance(instance.source, instance.cls, copied)
    for name, item in value.attributes.items():
        if deep and _plain_object(run, item):
            item = _object_copy(run, item, deep, memo)
        copied.attributes[name] = item
    return copied
