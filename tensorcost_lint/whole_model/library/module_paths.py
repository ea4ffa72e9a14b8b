"""Where each module object sits in the model: its dotted path from the root (`transformer.h.attn`) and its
class name, as torch names them. Kept apart from the run's calls because the paths are assigned once,
after the build, and read by every visit and the report; a mixin of ModelRun (model_run.py)."""

from __future__ import annotations

from ...analysis.facts import ModuleFact, SelfFact
from ..values import library_layers
from ..python import python_values
from ..values.objects import Embedding, ModuleDict, ModuleList, Sequential


class ModulePaths:
    """ModelRun's module paths: `paths` (id(module) -> path) and `classes` (path -> class name)."""

    def assign_paths(self, root: SelfFact) -> None:
        """Each module object's path from the root (`transformer.h.attn`), breadth first so a
        shared module (tied weights) takes its shortest path; a repeated ModuleList item has the
        list's path, its executions say how many there are."""
        pending = [(root, "")]
        while pending:
            value, path = pending.pop(0)
            if type(value) is python_values.ModuleChoice:  # each side at the choice's path
                names = dict.fromkeys(_class_name(self, side) for side in value.sides)
                self.classes[path] = self.classes.get(path) or " | ".join(names)
                pending.extend((side, path) for side in value.sides)
                continue
            if value in self.paths or not _is_module(value):
                continue
            self.paths[value] = path
            self.classes[path] = self.classes.get(path) or _class_name(self, value)
            children = _container_children(value)
            if type(value) is SelfFact:
                instance = self.instance(value)
                contents = instance.contents if instance is not None else None
                # `class Stage(nn.Sequential)`: its layers are `stage.0`, ... as torch names them
                children = list(value.attributes.items()) + _container_children(contents)
                if type(contents) in (ModuleFact, Embedding):  # `class Proj(nn.Linear)`: the layer is the object
                    self.paths.setdefault(contents, path)
            for name, child in children:
                pending.append((child, ".".join(p for p in (path, str(name)) if p)))


def _container_children(value) -> list:
    """(name, module) of a container's items, named as torch names them; a repeated item once,
    at the container's own path (its executions say how many)."""
    if type(value) is ModuleList:
        repeated = value.count is not None or all(i is value.items[0] for i in value.items)
        return [("", value.items[0])] if repeated and value.items else list(enumerate(value.items))
    if type(value) is ModuleDict:
        return list(value.items)
    if type(value) is Sequential:
        if value.count is not None:
            return [("", value.items[0])]
        return list(zip(value.names or range(len(value.items)), value.items))
    return []


def _is_module(value) -> bool:
    return type(value) in (SelfFact, ModuleList, ModuleDict, Sequential, Embedding, ModuleFact,
                           library_layers.EinopsLayer)


def _class_name(run, value) -> str:
    if type(value) is SelfFact:
        instance = run.instance(value)
        return instance.class_name if instance is not None else "Module"
    if type(value) is ModuleFact:
        return value.spec.label.rsplit(".", 1)[-1] if value.spec is not None and value.spec.label else \
            ("Linear" if value.kind == "linear" else "(shape-preserving)")
    return type(value).__name__
