"""A call in the running code dispatched on its callee's value, however the code reached it: a torch
module, an instance of the tree's classes, a function, a class to build, a choice of modules; builtins
and known values first; the calls the run cannot follow listed with why. A mixin of ModelEvaluator
(model_evaluator.py); the calls themselves are followed by the run (code_calls.py, module_calls.py)."""

from __future__ import annotations

import libcst as cst

from ...analysis import op_table
from ...analysis.arguments import CallArgs
from ...analysis.calls import SITE_FUNCTIONS, call_module
from ...analysis.facts import CONFIG, DimFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, StringFact, TensorFact
from ...analysis.interpreter import UNHANDLED
from ..python import (
    attribute_presence, call_binding, class_members, known_calls, known_floats, known_methods, known_values, object_creation,
    python_values, registries
)
from . import choices
from ..values import execution_modes, installed_source, library_layers
from ..values.value_arguments import value_arguments
from ..values.installed_source import searched_in_site
from ..source import module_bindings
from ..library import builtin_registry, container_updates, module_casts, module_methods, object_attributes, pytrees, torch_values
from ..values.library_objects import IntFact, InstanceDict, MappingFact, RecordFact, RegistryRef, SuperRef, \
    TorchFunction
from ..library.checkpointing import call_checkpoint, is_checkpoint_call
from ..values.objects import NONE, CallableChoice, ClassRef, Embedding, FunctionRef, ModuleDict, ModuleList, ModuleRef, \
    Sequential


class CallDispatch:
    """ModelEvaluator's `call_code`: the interpreter protocol's hook for every call it does not read
    itself."""

    def call_builtin_value(self, name: str, args):
        return builtin_registry.call_builtin_value(self, name, args)  # `round` used as a value

    # -- calls of the tree's code ------------------------------------------------------------------
    def _receiver(self, value):
        """The value of a method call's receiver, pure (_pure), for call_code to look at. A name's is
        looked up without the evaluator's observers when it is a module or the run's `self`, whose
        call goes on to a path that evaluates it again (`self.lin(h)`: `self` was read twice a
        call, each read observed, a third of a long forward's expressions); any other is evaluated."""
        if type(value) is cst.Name:
            peeked = self._eval_Name(value)
            if type(peeked) in _CALLED_THROUGH:
                return peeked
        return self.eval(value)

    def call_code(self, node: cst.Call, args, name):
        run = self.run
        if name == "torch.arange":
            return torch_values.arange(self, args)
        if name in torch_values.TENSOR_FUNCTIONS:
            return torch_values.tensor_from_data(self, args)
        if name in torch_values.LEGACY_CONSTRUCTORS:
            return torch_values.legacy_constructor(self, args, torch_values.LEGACY_CONSTRUCTORS[name])
        if name in torch_values.LIMITS_FUNCTIONS:
            return torch_values.numeric_limits(self, args)
        if name in torch_values.EAGER_CHECKS:
            return torch_values.eager_check(self, args)
        if name == "torch.is_tensor":
            return torch_values.is_tensor(self, args)
        if name in execution_modes.FUNCTIONS:  # `torch.no_grad()`, `torch.autocast(...)`: what a `with` enters
            return execution_modes.FUNCTIONS[name](self, args)
        if name in pytrees.FUNCTIONS:
            return pytrees.FUNCTIONS[name](self, args)
        if name in op_table.FUNCTIONS and searched_in_site(name.split(".")[0]):
            return UNHANDLED  # an installed library's op the table models (einx's): read from it, not the source
        if name in module_bindings.DYNAMIC_IMPORTS or type(node.func) is cst.Name and node.func.value == "__import__":
            imported = module_bindings.dynamic_import(self, args, name, node.func)  # `importlib.import_module("pkg.c")`
            if imported is not None:
                return imported
        handled = builtin_registry.call_builtin(self, node, args, name)  # builtins and stdlib, one registry
        if handled is UNHANDLED and name in library_layers.EINOPS_LAYERS:  # `Rearrange("b n d -> b d n")`
            handled = library_layers.build_einops_layer(self, library_layers.EINOPS_LAYERS[name], args)
        if handled is not UNHANDLED:
            return handled
        if name is not None and name.startswith("torch.nn."):
            spliced = call_binding.spliced_arguments(self, args, lambda n: _pure(n, self.env)) if args.starred else None
            if spliced is not None:  # `nn.Conv2d(cin, cout, k, padding=p, **kwargs)`: stride is in kwargs
                return _with_spliced(self, spliced, lambda bound: _torch_nn_call(self, name, bound))
            return self.torch_module(name, args)
        if name is not None and args.starred and name.startswith("torch.") and name in op_table.FUNCTIONS \
                and name not in SITE_FUNCTIONS:
            spliced = call_binding.spliced_arguments(self, args, lambda n: _pure(n, self.env))
            if spliced is not None:  # `torch.empty(1, 1, dim, **dd)`: dd's keywords (device, dtype), not sizes
                return _with_spliced(self, spliced, lambda bound: op_table.FUNCTIONS[name](self, bound))
        func = node.func
        kind = type(func)  # (compared by `is`: LibCST's classes are ABCs, slow to isinstance)
        if kind is cst.Attribute and func.attr.value in known_floats.METHODS and not args.positional \
                and not args.keywords and (type(func.value) is cst.Call or _pure(func.value, self.env)):
            receiver = self.eval(func.value)
            number = known_floats.method_call(run, receiver, func.attr.value)  # `math.log2(h).is_integer()`
            if number is not UNHANDLED:
                return number
            if type(func.value) is cst.Call:  # the receiver, evaluated once, is no number: its own method
                method = self.attribute_of(receiver, func.attr.value)
                return run.call_function(self, node, method, args) if type(method) is FunctionRef else None
        if kind is cst.Attribute and type(func.value) is cst.Call and \
                known_methods.string_chain(self, func.value, lambda root: _pure(root, self.env)):
            # `norm_layer.replace('_', '').lower()`: the inner call is a string, its method read here
            known = known_methods.method_call(self, func, self.eval(func.value), args)
            if known is UNHANDLED:  # a str method the run does not compute: its arguments still run
                for value in [*args.positional, *args.keywords.values()]:
                    self.eval(value)
                return None
            return known
        if kind is cst.Attribute and _pure(func.value, self.env):
            receiver = self._receiver(func.value)
            if type(receiver) is python_values.GrowingList and func.attr.value in _LIST_CHANGES:
                return _LIST_CHANGES[func.attr.value](self, receiver, args)
            if type(receiver) in (ModuleList, Sequential, ModuleDict):  # `features.add_module(name, block)`
                changed = container_updates.change(self, func.value, receiver, func.attr.value, args)
                if changed is not UNHANDLED:
                    return changed
            if type(receiver) is RegistryRef:
                return registries.call_lookup(run, self, receiver, func.attr.value, args)
            if type(receiver) in (MappingFact, SequenceFact, StringFact):
                known = known_methods.method_call(self, func, receiver, args)  # `kwargs.get('dim_head', 64)`
                if known is not UNHANDLED:
                    return known
            if type(receiver) is InstanceDict:  # `layer.__dict__.pop("_spec", None)`
                return object_attributes.dict_method(self, receiver, func.attr.value, args)
            if type(receiver) in (TensorFact, RecordFact, MappingFact) or receiver is CONFIG \
                    and run.method_of(CONFIG, func.attr.value) is None:
                return UNHANDLED  # a method of a value: the transfer tables read it
        if kind is cst.Attribute and func.attr.value == "__new__":
            made = object_creation.object_new(self, node, args)  # `super().__new__(cls)` in a `__new__`
            if made is not UNHANDLED:
                return made
        if kind is cst.Attribute and type(func.value) is cst.Call and _is_super(func.value):
            receiver = self.eval(func.value)
            method = self.attribute_of(receiver, func.attr.value)  # `super().forward(x)`
            if type(method) is FunctionRef:
                return run.call_function(self, node, method, args)
            if method is None and type(receiver) is SuperRef and func.attr.value == "__getattribute__" \
                    and len(args.positional) == 1 and not args.keywords and not args.starred:
                # no class of the tree after this one defines it: object's own lookup on the instance
                name = self.eval(args.positional[0])
                return object_attributes.plain_attribute(self, receiver.self_fact, name.value) \
                    if type(name) is StringFact else None
            if method is None and type(receiver) is SuperRef:
                return run.torch_super_call(self, node, receiver, func.attr.value, args)
            return UNHANDLED
        if is_checkpoint_call(name, func):
            return call_checkpoint(run, self, node, args)
        if kind is cst.Subscript and _pure(func.value, self.env) and all(
                isinstance(e.slice, cst.Index) and known_values.side_effect_free(e.slice.value) for e in func.slice):
            # a key computed from values (`kinds[(i % 2 == 0, in_loop)](dim)`) records no site
            callee = self.eval(func)  # `LLAMA_ATTENTION_CLASSES[config._attn_implementation](config=config)`, `self.h[1](x)`
        elif kind is cst.Call:
            return known_calls.call_of_call(self, node, args)  # `maybe(self.norm)(q)`
        elif kind is cst.Lambda:
            callee = self.eval(func)  # `(lambda f: f(x))(helper)`
        elif kind is cst.Attribute and module_bindings.is_dynamic_import(self, func.value):
            callee = self.eval(func)  # `importlib.import_module("pkg.c").helper(x)`
            if callee is None:
                run.not_followed(self.ctx, node, "the callee's module is imported at run time by a name the run "
                                                 "does not find in the analysed tree")
                return UNHANDLED
        elif kind is cst.Attribute and class_members.is_item_of_object(self, func.value):
            callee = self.eval(func)  # `registry[type(config)]._from_config(config)`: `__getitem__` runs once
        elif kind is cst.Attribute and func.attr.value in module_casts.METHODS and type(func.value) is cst.Call:
            return module_casts.call_on_value(self, func, args)  # `Norm(d).to(dtype=torch.float32)`
        elif not _pure(func, self.env):
            if kind is cst.Subscript and name is None:
                attribute_presence.unknown_call(self, func, args, _pure)
                run.not_followed(self.ctx, node, "the callee is picked by a subscript the run does not read")
            return UNHANDLED
        else:
            callee = self.eval(func)
        # dispatched on the callee's value, however the code reached it (a name, an attribute,
        # `self.layers[1]`); written inline, not as a method: model code nests calls 64 deep, each
        # level a few Python frames, under the interpreter's recursion limit
        if type(callee) is ModuleFact:
            if callee.kind in ("linear", "conv"):
                return run.call_linear(self, node, callee, args)
            run.visit(callee)  # a shape-preserving module, however the name reached it (`self.act`, or
            # `gelu = get_activation("gelu")` at the top of an imported file)
            out = call_module(self, node, callee, args)
            if run.has_parameters(callee):
                run.mark(out)
            return out
        if type(callee) is Embedding:
            return run.call_embedding(self, args, callee)
        if type(callee) is SelfFact and run.instance(callee) is not None:
            return run.call_instance(self, node, callee, args)
        if type(callee) is FunctionRef:
            return run.call_function(self, node, callee, args)
        if type(callee) is ClassRef:
            container = python_values.container_base(callee)
            if container is not None:
                return run.build_container(self, container, args)
            return run.construct(self, node, callee, args)
        if type(callee) is TorchFunction:
            return run.call_torch_function(self, node, callee, args)
        if type(callee) is Sequential:
            return run.call_sequential(self, node, callee, args)
        if type(callee) in (python_values.Partial, library_layers.EinopsLayer):
            return python_values.call_value(self, node, callee, args)
        if type(callee) is python_values.ModuleChoice:
            return choices.call_module_choice(self, node, callee, args)
        if type(callee) is CallableChoice:
            return choices.call_callable_choice(self, node, callee, args)
        if callee is None and kind is cst.Attribute and _pure(func.value, self.env):
            done = module_methods.call_module_method(self, self.eval(func.value), func.attr.value, args)
            if done is not UNHANDLED:
                return done
        if callee is None:
            attribute_presence.unknown_call(self, func, args, _pure)
            why = _why_unknown(self, func)
            if why is not None:  # the tree's own code that could not be read: listed, never dropped
                run.not_followed(self.ctx, node, why)
                return UNHANDLED
        if callee is None and name in _HIGHER_ORDER and _hands_tree_code(self, args):
            run.not_followed(self.ctx, node, f"`{name}` calls the code of the tree it is handed; the run does not "
                                             "follow it there")
            return UNHANDLED
        if type(callee) in (ModuleList, ModuleDict):
            # torch's containers have no forward (calling one raises): the run's value is not what the
            # code calls here, so what the call costs is not known — listed, never a silent zero
            run.not_followed(self.ctx, node, f"the callee is read as an nn.{type(callee).__name__}, which has no "
                                             "forward; what the code calls here is not known statically")
            return UNHANDLED
        if callee is None and kind is cst.Subscript:  # `self.layers[0](y)` of a list the run cannot read
            run.not_followed(self.ctx, node, "the callee is picked by a subscript whose value is not known")
            return UNHANDLED
        if callee is None and name is None and _module_like(func, self.env) and not _tensor_method(self, func):
            run.not_followed(self.ctx, node, "the callee is not known statically (defined outside the analysed "
                                             "tree, or chosen at run time)")
        return UNHANDLED


# Library functions that call a function they are handed (`functools.reduce(step, layers, x)`):
# the run does not apply them, so the code handed to them is listed, never dropped.
# a list being built (`layers = []`): `append`/`extend` add runs; any other change makes it unknown
_LIST_CHANGES = {"append": python_values.append, "extend": python_values.extend,
                 **{name: python_values.changed_otherwise for name in ("insert", "pop", "remove", "clear", "sort",
                                                                        "reverse", "__setitem__", "__delitem__")}}
_HIGHER_ORDER = frozenset({"functools.reduce", "itertools.starmap", "itertools.accumulate", "itertools.filterfalse",
                           "itertools.takewhile", "itertools.dropwhile", "itertools.groupby"})


def _hands_tree_code(interp, args) -> bool:
    """A lambda, or a function or class of the tree (alone or in a list or tuple written in the call)."""
    nodes = []
    for node in [*args.positional, *args.keywords.values()]:
        if isinstance(node, (cst.List, cst.Tuple)):
            nodes.extend(element.value for element in node.elements)
        else:
            nodes.append(node)
    return any(isinstance(node, cst.Lambda) or _pure(node, interp.env) and type(interp.eval(node)) in (FunctionRef, ClassRef)
               for node in nodes)


def _why_unknown(interp, func) -> str | None:
    """Why a callee of the tree's own code is unknown: the import that names it broke on the way
    (a file missing, unreadable, outside the project root, past a limit)."""
    tree, source = interp.run.tree, interp.source
    if isinstance(func, cst.Name):
        if func.value in interp.env:
            return None
        return tree.why_not_followed(source, func.value) or module_bindings.unread_binding(tree, source, func.value)
    if isinstance(func, cst.Attribute) and _pure(func.value):
        receiver = interp.eval(func.value)
        if type(receiver) is ModuleRef:
            why = tree.why_not_followed(receiver.source, func.attr.value)
            if why is None and tree.definition(receiver.source, func.attr.value) is None:
                why = f"`{func.attr.value}` is not defined in {receiver.source.path.name}"
            return why
        if type(receiver) is SelfFact and receiver.attributes.get(func.attr.value, NONE) is None:
            return installed_source.why_attribute_unknown(interp.run, receiver, func.attr.value)  # `self.ffn = Lib(...)`
        inner = func.value
        while isinstance(inner, cst.Attribute):
            inner = inner.value
        if isinstance(inner, cst.Name) and inner.value not in interp.env:
            return tree.why_not_followed(source, inner.value)
    return None


def _module_like(func, env) -> bool:
    """`self.x(...)`, `self.x.y(...)` or a local bound to an unknown value (`block(...)`): calls
    that may run a module; builtins and tensor methods are not listed."""
    if isinstance(func, cst.Name):
        return func.value in env and env[func.value] is None
    if isinstance(func, cst.Attribute):
        inner = func.value
        while isinstance(inner, cst.Attribute):
            inner = inner.value
        return isinstance(inner, cst.Name) and inner.value == "self"
    return False


def _tensor_method(interp, func) -> bool:
    """`self.cls_token.expand(...)`: a method of a tensor attribute, left to the transfer tables."""
    return isinstance(func, cst.Attribute) and type(interp.eval(func.value)) is TensorFact


def _is_super(node: cst.Call) -> bool:
    return isinstance(node.func, cst.Name) and node.func.value == "super" and not node.args


# receivers call_code never acts on: the call goes on to the path that evaluates its callee (the
# method of a module or of the run's `self`), which reads the receiver again, observed
_CALLED_THROUGH = frozenset({SelfFact, ModuleFact})


def _pure(node, env=None) -> bool:
    """Names and attribute chains, and in them `[k]` with k an int or string literal or a name
    holding one (`self.blocks[0].gate`, `self.layers[i]`, `config.rope[kind].get`): evaluating them records no
    site and saves nothing, so a call we leave to the transfer tables can evaluate them again."""
    while type(node) is cst.Attribute or type(node) is cst.Subscript:  # (not LibCST's slow ABC isinstance)
        if type(node) is cst.Subscript and not (len(node.slice) == 1 and _plain_index(node.slice[0].slice, env)):
            return False
        node = node.value
    return type(node) is cst.Name


def _plain_index(index, env) -> bool:
    """`[0]`, `["full"]`, `[i]` with i an int or a string: an item of a list or a dict (a tensor
    indexed so saves nothing and is a view)."""
    if not isinstance(index, cst.Index):
        return False
    if isinstance(index.value, (cst.Integer, cst.SimpleString)):
        return True
    return isinstance(index.value, cst.Name) and env is not None and \
        type(env.get(index.value.value)) in (DimFact, IntFact, StringFact, ScalarFact)  # an int of unknown value too


def _torch_nn_call(interp, name, args):
    """`torch.nn.X(...)` of spliced arguments: a module built, else a function of the op table
    (`F.layer_norm(*args)`) read by its rule, as the same call written out is."""
    built = interp.torch_module(name, args)
    if built is UNHANDLED and name in op_table.FUNCTIONS and name not in SITE_FUNCTIONS:
        return op_table.FUNCTIONS[name](interp, args)
    return built


def _with_spliced(interp, spliced, call):
    """`call(CallArgs)` on spliced_arguments' result: the written arguments as they are, each
    spliced item read through a name bound to its value for the call."""
    positional, keywords = spliced
    values = [fact for kind, fact in positional if kind == "value"]
    named = [(key, fact) for key, (kind, fact) in keywords.items() if kind == "value"]
    with value_arguments(interp, values, named) as bound:
        names = iter(bound.positional)
        nodes = [node if kind == "node" else next(names) for kind, node in positional]
        words = {key: node if kind == "node" else bound.keywords[key] for key, (kind, node) in keywords.items()}
        return call(CallArgs(nodes, words, False, {}))
