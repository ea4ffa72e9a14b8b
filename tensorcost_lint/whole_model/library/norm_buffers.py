"""What torch's batch norms set in their constructor, read off a module built in the run (`nn.BatchNorm2d(c)`,
or a class of the tree deriving from one, whose forward reads them): `num_features`, `eps`,
`momentum`, `affine` and `track_running_stats` from the constructor's arguments or torch's defaults,
and the buffers torch registers when it tracks running statistics — `running_mean` and `running_var`
(float32, one per feature) and `num_batches_tracked` (an int64 scalar); None where it does not track
them. So a forward copied from torch's (`if self.momentum is None:`, `if self.training and
self.track_running_stats:`, `self.num_batches_tracked.add_(1)`) is decided and followed as torch
runs it. An argument the run cannot read leaves what depends on it unknown."""

from __future__ import annotations

from shape_annotations import Const

from ...analysis.facts import DimFact, ScalarFact, TensorFact
from ...analysis.interpreter import UNHANDLED
from ..python.call_binding import spliced_arguments
from ..python.known_values import int_of, side_effect_free
from ..values.library_objects import IntFact
from ..values.objects import NONE, BoolFact

BATCH_NORMS = frozenset({"BatchNorm1d", "BatchNorm2d", "BatchNorm3d"})
_ARGUMENTS = ("num_features", "eps", "momentum", "affine", "track_running_stats")
_DEFAULTS = {"eps": 1e-5, "momentum": 0.1, "affine": True, "track_running_stats": True}
_UNKNOWN = object()


def record(run, interp, last: str, args, module) -> None:
    """`module` was built as `torch.nn.<last>(args)`: what its constructor set, when a batch norm."""
    if last not in BATCH_NORMS or args is None or interp is None:
        return
    spliced = spliced_arguments(interp, args, side_effect_free)  # `**dd` of a known dict spliced in
    if spliced is None:
        return
    positional, keywords = spliced
    settings = {}
    for position, name in enumerate(_ARGUMENTS):
        given = positional[position] if position < len(positional) else keywords.get(name)
        if given is None:
            settings[name] = _DEFAULTS.get(name, _UNKNOWN)
        elif given[0] == "value":
            settings[name] = _value(run, given[1])
        else:  # read again only where reading records nothing (a name, a literal)
            settings[name] = _value(run, interp.eval(given[1])) if side_effect_free(given[1]) else _UNKNOWN
    run.parameters.batch_norms[id(module)] = (module, settings, {})


def attribute(run, module, name: str):
    """`module.name` of a batch norm built in the run; UNHANDLED for any other read."""
    entry = run.parameters.batch_norms.get(id(module))
    if entry is None or name not in (*_ARGUMENTS, "running_mean", "running_var", "num_batches_tracked"):
        return UNHANDLED
    _, settings, facts = entry
    if name not in facts:
        facts[name] = _fact(run, settings, name)
    return facts[name]


def _fact(run, settings: dict, name: str):
    if name in _ARGUMENTS:
        value = settings[name]
        if value is _UNKNOWN:
            return None
        if value is None:
            return NONE
        if type(value) is bool:
            return BoolFact(value)
        if type(value) is int:
            return DimFact(Const(value)) if value >= 1 else IntFact(value)
        return run.floats.make(value)
    tracked, features = settings["track_running_stats"], settings["num_features"]
    if tracked is _UNKNOWN or type(tracked) is not bool:
        return None
    if not tracked:
        return NONE
    if name == "num_batches_tracked":
        return TensorFact((), "int64", framework="torch")
    if type(features) is not int or features < 1:
        return None
    return TensorFact((Const(features),), "float32", framework="torch")


def _value(run, fact):
    """The Python value of a constructor argument's fact, or _UNKNOWN."""
    if fact is NONE:
        return None
    if type(fact) is BoolFact:
        return fact.value
    if type(fact) in (DimFact, IntFact):
        value = int_of(run, fact)
        return _UNKNOWN if value is None else value
    if type(fact) is ScalarFact:
        value = run.floats.value(fact)
        return _UNKNOWN if value is None else value
    return _UNKNOWN
