"""Calls of the tree's own code: a module's forward, a function, a class built by its constructor, a
`super()` call into torch; each followed under the limits below (call depth, constructor depth,
recursion, the work budget) and memoised by the caller's argument facts. A mixin of ModelRun
(model_run.py); the callee's body runs in function_runs.py."""

from __future__ import annotations

from contextlib import contextmanager

import libcst as cst

from ...analysis.facts import CONFIG, ModuleFact, ScalarFact, SelfFact, SequenceFact, TensorFact
from ...analysis.interpreter import UNHANDLED
from ..python import call_binding, class_decorators, object_creation, python_values
from . import module_globals
from ..library.checkpointing import checkpointed_layer, run_checkpointed
from ..values.inheritance import find_method, module_root, plain_class, torch_base
from ..python.output_records import construct_record
from ..values.library_objects import MappingFact
from ..values.objects import NONE, ClassRef, Embedding, FreshObject, FunctionRef, Instance, ModuleDict, ModuleList, Sequential, \
    Visit
from ..values.optional_values import MaybeNone
from ..values.source_error import StackExhausted
from ..values.identity import Same

MAX_CALL_DEPTH = 64
# Inside a constructor, calls of methods (not of other constructors) are followed this deep:
# `super().__init__(config)` and the helpers it calls build attributes; the availability checks a
# library base class runs below that build nothing a cost depends on.
MAX_BUILD_CALL_DEPTH = 2
# Plain functions (not methods) of the file whose constructor runs are followed deeper: its
# configuration helpers call each other (x-transformers: `super().__init__` -> `groupby_prefix_and_trim`
# -> `group_dict_by_key` -> the `partial(string_begins_with, prefix)` it calls); a library's
# availability checks in other files (transformers' import_utils.py) stay two calls deep.
MAX_BUILD_HELPER_DEPTH = 4
# Constructors running inside constructors (`Tree(depth - 1)` in `Tree.__init__`): a recursive
# build whose depth the run cannot decide stops here, listed, instead of exhausting Python's stack.
MAX_BUILD_NESTING = 32
# An object built by the running code, outside any constructor (a forward's `DynamicCache(config=
# self.config)`): what its constructor computes is part of the forward (the layers a cache builds
# from the config's per-layer view), so its calls are followed this deep, as a forward's are bounded
# by MAX_CALL_DEPTH.
MAX_FORWARD_BUILD_CALL_DEPTH = 12
# A `@classmethod` called through a class inside a constructor (`AutoModel.from_config(config.text_config)`)
# is a factory: what its calls compute (a registry lookup of the class for the config's type, through
# the mapping's `__getitem__` and a module's attribute) decides which object is built, so they are
# followed this deep, counted from the factory; a constructor it calls has a constructor's limits. A
# method or property of the config is followed as a factory too (_on_config).
MAX_FACTORY_CALL_DEPTH = 6


class CodeCalls:
    """ModelRun's calls of the tree's code: `call_instance`, `call_function`, `construct`, `build`,
    and `_invoke`, the one place a call is memoised, bounded and added to the caller's summary."""

    # -- calls -------------------------------------------------------------------------------------
    def _evaluate_args(self, interp, args):
        return call_binding.evaluate_arguments(interp, args, splices=True)

    def call_instance(self, interp, node, self_fact, args):
        # a module runs forward; a plain class of the tree its own `__call__` (`equals('a')(x)`)
        forward = self.method_of(self_fact, "forward") or self.method_of(self_fact, "__call__")
        if forward is None:  # `class Stage(nn.Sequential)` with no forward: torch's forward runs
            contents = self.instance(self_fact).contents
            if type(contents) is Sequential:
                self.visit(self_fact)
                return self.call_sequential(interp, node, contents, args)
            positional, keywords = call_binding.evaluate_arguments(interp, args)
            if contents is None or type(contents) is SelfFact or len(positional) != 1 or keywords:
                return None
            self.visit(self_fact)
            return self.apply_module(interp, node, contents, positional[0])
        unknown_with_grad: set = set()
        positional, keywords = call_binding.evaluate_arguments(interp, args, unknown_with_grad, splices=True)
        if checkpointed_layer(self, self_fact):
            return run_checkpointed(self, forward, positional, keywords, node)
        return self._invoke(forward, positional, keywords, node, frozenset(unknown_with_grad))

    def call_function(self, interp, node, function: FunctionRef, args):
        unknown_with_grad: set = set()
        positional, keywords = call_binding.evaluate_arguments(interp, args, unknown_with_grad, splices=True)
        if function.bound is None and positional and type(positional[0]) is SelfFact \
                and self.instance(positional[0]) is not None and _first_parameter(function.node) == "self":
            # `original_init(self, config)`: a method read from its class, called with the object
            function = FunctionRef(function.source, function.node, self.instance(positional[0]), function.closure)
            positional = positional[1:]
            unknown_with_grad = {i - 1 if type(i) is int else i for i in unknown_with_grad if i != 0}
        return self._invoke(function, positional, keywords, node, frozenset(unknown_with_grad))

    def call_torch_function(self, interp, node, function, args):
        return call_binding.call_torch_function(interp, node, function.name, args)

    def torch_super_call(self, interp, node, super_ref, name: str, args):
        """`super().__init__(...)` / `super().forward(x)` in a subclass of a torch module whose bases
        in the tree define neither: torch's module is built from the arguments (a container fills
        itself), and its forward runs (`nn.Sequential.forward` runs the items in turn; a scaled
        `nn.Embedding` subclass looks up its rows)."""
        instance = self.instance(super_ref.self_fact)
        base = torch_base(self, instance.source, instance.cls) if instance is not None else None
        if base is None and name == "__init__" and not args.positional and not args.keywords and not args.starred \
                and instance is not None and module_root(self, instance.source, instance.cls):
            return NONE  # nn.Module.__init__(): the module's bookkeeping, nothing that may raise
        if base is None:
            return UNHANDLED
        if name == "__init__":
            built = interp.torch_layer(base, args)
            if type(built) is python_values.GrowingList:
                built = built.as_module_list()
            instance.contents = built
            return NONE
        if name == "forward" and type(instance.contents) is Sequential:
            return self.call_sequential(interp, node, instance.contents, args)
        if name == "forward" and instance.contents is not None and len(args.positional) == 1 and not args.keywords:
            return self.apply_module(interp, node, instance.contents, interp.eval(args.positional[0]))
        return UNHANDLED

    def construct(self, interp, node, class_ref, args):
        new = object_creation.new_method(self, class_ref)
        if new is not None:
            return self._created_by_new(interp, class_ref, new, args)
        if find_method(self, class_ref.source, class_ref.node, "__init__") is None:
            base = torch_base(self, class_ref.source, class_ref.node)
            if base is not None:  # `class Proj(nn.Linear): ...` with no __init__: torch's builds it
                self_fact = self.build(class_ref.source, class_ref.node, [], {}, read_missing_as_dims=False)
                self.instance(self_fact).contents = interp.torch_layer(base, args)
                return self_fact
        positional, keywords = self._evaluate_args(interp, args)
        record = construct_record(self, interp, class_ref, call_binding.splice_free(positional), keywords)
        if record is not None:
            return record
        return self.build(class_ref.source, class_ref.node, positional, keywords, read_missing_as_dims=False)

    def _created_by_new(self, interp, class_ref, new, args):
        """`cls(...)` of a class whose chain defines `__new__`: it runs as part of the construction,
        and `__init__` follows only on a new object of the class it makes (object_creation.py)."""
        positional, keywords = self._evaluate_args(interp, args)
        if self.building >= MAX_BUILD_NESTING:
            self.limit_at(FunctionRef(new[0], new[1]), f"{class_ref.node.name.value}()",
                          f"constructors nested more than {MAX_BUILD_NESTING} deep: not built (a recursive build)")
            return None
        with self._constructing(new[0]):
            made = self._run_function(new[0], new[1], None, [class_ref, *positional], keywords, False)
        if type(made) is FreshObject:
            if made.cls.node is not class_ref.node:
                return None  # an object of another class, left uninitialised: not modelled
            return self.build(class_ref.source, class_ref.node, positional, keywords, read_missing_as_dims=False)
        return made  # another object (a plain layer): Python runs no `__init__` of the class on it

    @contextmanager
    def _constructing(self, source):
        """Inside a constructor: its calls are bounded as a build's (MAX_BUILD_CALL_DEPTH and the
        rest) and cost nothing the totals count."""
        forward_build = self.forward_build
        if self.building == 0:
            self.forward_build = bool(self.frames)  # called by running code: MAX_FORWARD_BUILD_CALL_DEPTH
        self.building += 1
        calls, self.build_calls = self.build_calls, 0
        factory, self.factory = self.factory, False
        built_file, self.build_file = self.build_file, source
        try:
            with self.collecting([]):  # building costs nothing we count
                yield
        finally:
            self.building -= 1
            self.build_calls = calls
            self.factory = factory
            self.build_file = built_file
            self.forward_build = forward_build

    def build(self, source, cls, positional, keywords, *, read_missing_as_dims: bool):
        self_fact = SelfFact({})
        instance = Instance(source, cls, self_fact)
        self.instances[id(self_fact)] = instance
        if self.config_code:
            self.config_views[id(self_fact)] = self_fact  # built by the config's code (_on_config); ids stay unique
        found, closure = find_method(self, source, cls, "__init__"), None  # its own, or the one it inherits
        patched = class_decorators.patched_member(self, source, cls.name.value, "__init__")
        if type(patched) is FunctionRef:  # `@use_experts_implementation`'s __init__ wrapping the class's
            found, closure = (patched.source, patched.node), patched.closure
        if found is not None and self.building >= MAX_BUILD_NESTING:
            self.limit_at(FunctionRef(found[0], found[1]), f"{cls.name.value}()",
                          f"constructors nested more than {MAX_BUILD_NESTING} deep: not built (a recursive build)")
            return self_fact
        if found is not None:
            init_source, init = found
            limits = len(self.limits)
            with self._constructing(source):
                self._run_function(init_source, init, self_fact, positional, keywords, read_missing_as_dims, closure)
            if len(self.limits) != limits:  # a limit cut the build short: hasattr cannot tell what is missing
                self.incomplete_objects.add(self_fact)
            grown = [name for name, value in self_fact.attributes.items() if type(value) is python_values.GrowingList]
            # a module built: its lists are the module lists their appends made; a plain object's
            # list (a cache's `self.states = []`) is a list the forward may append to (the class
            # chain is read only for an object holding such a list)
            if grown and not plain_class(self, source, cls):
                for name in grown:
                    self_fact.attributes[name] = self_fact.attributes[name].as_module_list()
            if type(instance.contents) is Sequential:
                instance.contents = _with_registered_children(self, self_fact, instance.contents)
        return self_fact

    def _invoke(self, function: FunctionRef, positional, keywords, node, unknown_with_grad=frozenset()):
        """`unknown_with_grad`: positions (index or keyword) of unknown arguments computed from a
        tensor that needs a gradient (call_binding.evaluate_arguments)."""
        bound = function.bound.self_fact if function.bound is not None else None
        key = (id(function.node), Same(bound), self.module,
               tuple((_key(f, self.floats), self.needs_grad(f)) for f in positional),
               tuple((k, _key(f, self.floats), self.needs_grad(f)) for k, f in sorted(keywords.items(), key=lambda i: i[0])),
               tuple(sorted(map(str, unknown_with_grad))), module_globals.memo_state(self))
        cached = self.memo.get(key) if function.closure is None else None  # a closure reads names that change
        if cached is not None and self.building and _makes_modules(self, cached[0]):
            cached = None  # `conv3x3(c, c)` called twice builds two modules, each with its own parameters
        if cached is not None:
            result, entries = cached
            self.add_call(entries)
            if self.memo_doubted.get(key, True):
                self.doubts += 1  # what the call's run could not tell, it cannot tell again
            return result
        # a call that never ends is the same function on the same object under the same closure with the
        # same arguments (`self.child(x)` in a tree of modules runs the same forward on another object,
        # `and_masks(and_masks(a, b), c)` one `and_mask` inside another); a recursion on smaller data (a
        # config's `to_dict` helper on each nested dict, `Tree(depth - 1)`) runs as Python runs it, all
        # bounded by MAX_CALL_DEPTH and the work budget
        running = (id(function.node), id(bound), id(function.closure) if function.closure is not None else None)
        if running in self.active and (function.closure is not None or key in self.active_keys):
            self.limit_at(function, f"{function.node.name.value}()", "recursive call: not followed")
            return None
        if len(self.active) >= MAX_CALL_DEPTH:
            self.limit_at(function, f"{function.node.name.value}()",
                          f"call depth limit: more than {MAX_CALL_DEPTH} nested calls; not followed")
            return None
        if not self.budget.spend("contexts"):
            if "contexts" not in self.budget_cuts:
                self.budget_cuts.add("contexts")
                self.limit_at(function, f"{function.node.name.value}()", self.budget.reason("contexts"))
            return None
        helper = function.bound is None and function.source is self.build_file
        limit = MAX_FORWARD_BUILD_CALL_DEPTH if self.forward_build else MAX_FACTORY_CALL_DEPTH if self.factory else \
            MAX_BUILD_HELPER_DEPTH if helper else MAX_BUILD_CALL_DEPTH
        # a function defined inside the one running (a closure) is that function's own code, not a
        # call one level further into a library: it is followed, and the calls it makes count as
        # the enclosing function's
        nested = 1 if self.building and function.closure is None else 0
        if nested and self.build_calls >= limit:
            return None  # bounded work: a constructor's methods are followed two calls deep, functions four
        module = self.module
        entries: list = []
        if bound is not None and bound in self.paths and function.node.name.value == "forward" \
                and _own_forward(self, bound, function):
            self.module = self.paths[bound]
            entries.append(Visit(self.module))
        self.active.append(running)
        self.active_keys.append(key)
        factory = self.factory
        on_config = bound is not None and _on_config(self, bound)
        if nested and not self.factory and (_is_factory(function, positional) or on_config):
            self.factory, calls, self.build_calls, nested = True, self.build_calls, 0, 0
        self.config_code += on_config
        self.build_calls += nested
        exhausted = False
        doubts = self.doubts
        try:
            with self.collecting(entries):
                result = self._run_function(function.source, function.node, bound, positional, keywords, False,
                                            function.closure, unknown_with_grad)
        except (RecursionError, StackExhausted):
            # Python's stack ran out before MAX_CALL_DEPTH (a level of `h(x) + h(x)` takes more frames
            # than a plain call): this call is cut and listed, here where the stack has room again, and
            # the model goes on
            result, exhausted = None, True
        finally:
            self.config_code -= on_config
            self.active.pop()
            self.active_keys.pop()
            self.build_calls -= nested
            if self.factory and not factory:
                self.factory, self.build_calls = False, calls
            self.module = module
        if exhausted:
            self.limit_at(function, f"{function.node.name.value}()",
                          f"stack limit: Python's stack ran out {len(self.active) + 1} nested calls deep "
                          f"(below the call depth limit of {MAX_CALL_DEPTH}); not followed")
            self.add_call(entries)  # what it recorded before the cut counts; no memo: a shallower call may finish
            return None
        if function.closure is None:
            self.memo[key] = (result, entries)
            self.memo_doubted[key] = self.doubts != doubts
        self.add_call(entries)
        return result


def _with_registered_children(run, self_fact, contents: Sequential):
    """A subclass of nn.Sequential runs every child it registered, in order: the modules handed to
    `super().__init__`, then those its `__init__` added (`self.add_module('conv1', ...)`,
    `self.act = act_layer()`), as torch's forward iterates `_modules`. None (its forward unknown)
    when a child's name could not be read, or the items are one module repeated."""
    later = [(name, value) for name, value in self_fact.attributes.items() if python_values.is_module_value(value)]
    if not later:
        return contents
    if contents.count is not None or self_fact in run.incomplete_objects:
        return None
    names = contents.names if contents.names is not None else tuple(str(i) for i in range(len(contents.items)))
    return Sequential(contents.items + tuple(value for _, value in later), None, names + tuple(name for name, _ in later))


def _is_factory(function: FunctionRef, positional) -> bool:
    """A `@classmethod` called through its class: `cls` bound to a class (python_values.class_function)."""
    return bool(positional) and type(positional[0]) is ClassRef and any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "classmethod" for d in function.node.decorators)


def _on_config(run, bound) -> bool:
    """A method or property of the config (the one read from `dims_from`, a copy of it, a sub-config,
    an object the config's own code built: a view of it) called inside a constructor: it computes
    the sizes the constructor builds with (`config.per_layer_config[i]`: the view's item, a copy of
    the config with the layer's overrides), so its calls are followed as a factory's are."""
    return bound is CONFIG or id(bound) in run.config_copies or id(bound) in run.config_views \
        or bound in run.sub_config_objects


def _makes_modules(run, value) -> bool:
    """Whether a call's result is (or lists) a module object: a new one each time the call runs."""
    items = value.items if type(value) is SequenceFact else (value,)
    return any(type(item) in (ModuleFact, Embedding, Sequential, ModuleList, ModuleDict)
               or type(item) is SelfFact and run.instance(item) is not None for item in items)


def _own_forward(run, bound, function) -> bool:
    """The module's own forward starts a visit; `super().forward(x)` inside it does not."""
    own = run.method_of(bound, "forward")
    return own is None or own.node is function.node


def _first_parameter(function: cst.FunctionDef) -> str | None:
    params = (*function.params.posonly_params, *function.params.params)
    return params[0].name.value if params else None


def _key(value, floats):
    if type(value) is ScalarFact:
        # every ScalarFact equals every other (a fact of no fields): a float the run knows is keyed
        # by its value, so `make_divisible(c * 0.25)` for two widths are two calls
        known = floats.value(value)
        return value if known is None else ("float", float(known).hex())  # -0.0 apart from 0.0
    if type(value) is TensorFact:
        return Same(value)
    if type(value) is SequenceFact:  # a tuple holding tensors: each by identity too (`f((out, aux))`)
        return ("sequence", tuple(_key(item, floats) for item in value.items), value.names, value.kind)
    if type(value) is MappingFact:
        return ("mapping", tuple((key, _key(item, floats)) for key, item in value.items))
    if type(value) is MaybeNone:
        return ("optional", _key(value.value, floats))
    if type(value) is call_binding.Splice:
        return ("splice", _key(value.collection, floats))
    try:
        hash(value)
        return value
    except TypeError:
        return ("id", tuple(map(Same, value))) if isinstance(value, (tuple, list)) else ("id", Same(value))
