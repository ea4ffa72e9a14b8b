"""The per-file evaluator and flow, extended for a whole-model run through the interpreter
protocol: calls of the tree's code (`call_code`), gradient marks on tensors, decided branches,
loops that multiply executions, and return values."""

from __future__ import annotations

import libcst as cst

from shape_annotations import BinOp, Const, evaluate_dim, simplify_dim

from ..analysis import tensor_functions
from ..analysis.evaluator import Evaluator
from ..analysis.calls import call_module, module_constructor
from ..analysis.site_registry import FUNCTIONS as SITE_FUNCTIONS
from ..analysis.facts import CONFIG, DimFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, StringFact, \
    TensorFact, merge_facts
from ..analysis.function_flow import FunctionFlow, merge_envs
from ..analysis.interpreter import UNHANDLED
from ..analysis.literals import int_value
from . import attribute_presence, choices, class_decorators, class_members, decisions, expressions, installed_source, \
    known_builtins, known_floats, known_iteration, \
    known_math, known_values, library_layers, library_values, module_casts, module_methods, optional_values, python_values, \
    registries, torch_values
from .library_objects import IntFact, MappingFact, RecordFact, RegistryRef, SuperRef, TorchFunction
from .checkpointing import call_checkpoint, is_checkpoint_call
from .gradient_flow import flow_into, union, updated_in_place
from .objects import NONE, BoolFact, CallableChoice, Choice, ClassRef, Embedding, FunctionRef, ModuleDict, ModuleList, \
    ModuleRef, Repeat, Sequential, known_count

GRAD_TAINT = "\0grad:"  # env key: a name bound from a value computed from gradient-carrying tensors
_CONSTANTS = {"True": BoolFact(True), "False": BoolFact(False), "None": NONE}


class ModelEvaluator(Evaluator):
    def __init__(self, ctx, env: dict, autocast=None, *, run, source) -> None:
        super().__init__(ctx, env, autocast)
        self.run = run
        self.source = source

    def eval(self, node):
        # written as one method (one Python frame per expression level): model code nests calls 64
        # deep, each of many levels, under the interpreter's recursion limit
        loss, frames = self.run.shape_loss, self.run.grad_frames
        loss.frames.append(None)
        try:
            frames.append(None)
            try:
                fact = super().eval(node)
            finally:
                flowed = frames.pop()  # the tensors needing a gradient this expression read or made
            if not python_values.is_metadata(node):  # `x.shape`, `x.device`: no gradient flows through them
                run = self.run
                run.storage.observe(self, node, fact)
                run.grad_flow.settle(node, fact)
                if flowed and _returned_by_tree_code(run, node, fact):
                    # the callee's own ops marked what needs one, and what each was computed from
                    flowed = _grad_items(run, fact)
                merge = isinstance(node, cst.Call)  # `x.add_(y)` returns x, now computed from y too
                if flowed and type(fact) is TensorFact:
                    run.mark(fact, flowed, merge)  # computed from a tensor that needs a gradient
                    updated_in_place(run, self, node, flowed)
                elif flowed and type(fact) is SequenceFact:
                    for item in fact.items:  # `q, k, v = self.c_attn(x).split(...)`
                        run.mark(item, flowed, merge)
                run.saved_ops.observe(run, self, node, fact)  # what the op saves (memory_activations)
                run.live.observe(self, node, fact)  # what the op reads (memory_live)
                if frames:
                    # a tensor stands for what it was computed from; any other value (an output
                    # record, a dict) passes on what flowed into it
                    flow_into(frames, _grad_items(run, fact) or flowed)
                    if isinstance(node, cst.Name):
                        flow_into(frames, self.env.get(GRAD_TAINT + node.value))
            loss.settle(self.ctx, node, fact, self.run.loss_reason)
            return fact
        finally:
            loss.frames.pop()

    def _eval_Name(self, node: cst.Name):
        if node.value in _CONSTANTS and node.value not in self.env:
            return _CONSTANTS[node.value]
        fact = super()._eval_Name(node)
        if fact is None and node.value not in self.env:
            if node.value in self.source.constants:
                value = self.source.constants[node.value]
                return DimFact(Const(value)) if value >= 1 else None
            found = self.run.tree.definition(self.source, node.value)
            if found is not None:
                source, definition = found
                return ClassRef(source, definition) if isinstance(definition, cst.ClassDef) \
                    else FunctionRef(source, definition)
            library = python_values.library_class(self, node)
            if library is not None:
                return library
            registry = registries.registry(self.run, self.source, node.value)
            if registry is not None:
                return registry
            value = self.run.module_value(self.source, node.value)
            if value is None and self.run.tree.is_import(self.source, node.value):
                module = self.run.tree.module_named(self.source, node.value)  # `from . import c`
                return ModuleRef(module) if module is not None else None
            return value
        return fact

    def with_env(self, env: dict) -> "ModelEvaluator":
        return ModelEvaluator(self.ctx, env, self.autocast, run=self.run, source=self.source)

    # -- Python values (python_values.py) and library-style values (expressions.py, library_values.py)
    def _eval_Integer(self, node):
        value = int_value(node)
        return IntFact(value) if value is not None and value <= 0 else super()._eval_Integer(node)

    def _eval_Float(self, node: cst.Float):
        known = known_values.zero_float(node) or python_values.float_literal(node)
        if known is not None:
            return known
        try:
            return self.run.floats.make(float(node.value))  # `0.5`: its value kept for `int(d * 0.5)`
        except ValueError:
            return super()._eval_Float(node)

    def _eval_UnaryOperation(self, node):
        if isinstance(node.operator, cst.Not):  # `project_out = not (heads == 1 and dim_head == dim)`
            known = expressions.truth(self.run, self.eval(node.expression))
            return None if known is None else BoolFact(not known)
        value = int_value(node)
        if value is not None and value <= 0:
            return IntFact(value)
        if isinstance(node.operator, cst.Minus):
            fact = self.eval(node.expression)
            if type(fact) is IntFact:
                return IntFact(-fact.value)
            size = known_values.int_of(self.run, fact) if type(fact) is DimFact else None
            if size is not None:
                return known_values.int_fact(-size)  # `-self.keep` of a known 3 is the int -3
            return fact.with_shape(fact.shape) if type(fact) is TensorFact else (
                ScalarFact() if type(fact) in (ScalarFact, DimFact) else None)
        return super()._eval_UnaryOperation(node)

    def _eval_Lambda(self, node: cst.Lambda):
        return python_values.lambda_function(self, node)

    def _eval_IfExp(self, node: cst.IfExp):
        return python_values.conditional(self, node)

    def _eval_Comparison(self, node):
        if len(node.comparisons) == 1 and all(expressions.is_plain(n) for n in (node.left, node.comparisons[0].comparator)):
            decided = self.run.decide(self, node)  # `is_cross_attention = encoder_hidden_states is not None`
            if decided is not None:
                return BoolFact(decided)
        known = decisions.compare_known(self, node)  # `(num % den) == 0`, `ind == len(layers) - 1`
        if known is not UNHANDLED and known is not None:
            return known
        return super()._eval_Comparison(node)

    def _eval_FormattedString(self, node):
        return known_values.formatted_string(self, node)

    def _eval_Dict(self, node):
        if any(isinstance(element, cst.StarredDictElement) for element in node.elements):
            return known_values.dict_display(self, node)  # `{**kwargs, key: value}`
        return expressions.dict_literal(self, node)

    def _eval_BooleanOperation(self, node):
        return expressions.boolean_operation(self, node)

    def _eval_Tuple(self, node):
        return expressions.sequence_literal(self, node)

    def _eval_List(self, node):
        return python_values.empty_list(self) if not node.elements else expressions.sequence_literal(self, node)

    def _eval_ListComp(self, node: cst.ListComp):
        known = known_iteration.comprehension(self, node)  # over a known sequence: item by item
        return python_values.comprehension(self, node) if known is UNHANDLED else known

    def _eval_GeneratorExp(self, node: cst.GeneratorExp):
        known = known_iteration.comprehension(self, node)
        return python_values.comprehension(self, node) if known is UNHANDLED else known

    def _eval_DictComp(self, node: cst.DictComp):
        known = known_iteration.comprehension(self, node)
        if known is UNHANDLED:
            self.walk(node)
            return None
        return known

    def _eval_Subscript(self, node):
        known = known_values.subscript(self, node)  # `seq[i]` with a known int i, `key[n:]` of a string
        return expressions.subscript(self, node) if known is UNHANDLED else known

    def arithmetic(self, operator, left, right):
        known = known_floats.arithmetic(self.run, operator, left, right)
        if known is not UNHANDLED:
            return known
        known = known_values.arithmetic(self.run, operator, left, right)
        if known is not UNHANDLED:
            return known
        if type(right) is IntFact and right.value == 0 and isinstance(operator, (cst.Add, cst.Subtract)):
            return left  # `seq_length + cache_length` with cache_length 0
        if type(left) is IntFact and left.value == 0 and isinstance(operator, cst.Add):
            return right
        if isinstance(operator, cst.Multiply):
            repeated = expressions.repeat_sequence(self.run, left, right)
            if repeated is not UNHANDLED:
                return repeated
        left, right = (ScalarFact() if type(f) is IntFact else f for f in (left, right))
        if isinstance(operator, cst.Add):
            joined = expressions.concatenate(left, right)
            if joined is not UNHANDLED:
                return joined
        return super().arithmetic(operator, left, right)

    def _eval_Attribute(self, node):
        if self.run.assume:
            assumed = library_values.assumed_value(self.run, self.ctx, node)  # a registry key, any expression's value
            if assumed is not None:
                return assumed
        library = python_values.library_class(self, node)  # `act_layer=nn.GELU`
        if library is not None:
            return library
        resolved = self.ctx.settings.imports.resolve(node)
        constant = known_math.constant(self.run, resolved)
        if constant is not None:
            return constant
        if resolved is not None and resolved.startswith("torch.") and \
                (resolved in tensor_functions.FUNCTIONS or resolved in SITE_FUNCTIONS):
            return TorchFunction(resolved)  # `self.act = nn.functional.gelu`: a function as a value
        return super()._eval_Attribute(node)

    def attribute_of(self, receiver, name: str):
        if receiver is torch_values.NUMERIC_LIMITS:
            return torch_values.limit_attribute(name)
        if type(receiver) is TensorFact and name == "ndim":
            return known_values.rank(receiver)  # `'b j d' if k.ndim == 3 else 'b h j d'`
        if type(receiver) is TensorFact and name == "device":
            return torch_values.DEVICE
        if receiver is CONFIG:
            return library_values.config_attribute(self.run, name)
        if type(receiver) is RecordFact:
            return receiver.attribute(name)
        if type(receiver) is SuperRef:
            return self.run.super_method(receiver, name)
        if type(receiver) is RegistryRef:
            return registries.mapping_attribute(self.run, self, receiver, name)
        if type(receiver) is MappingFact:
            return None
        if type(receiver) is ModuleDict:
            return dict(receiver.items).get(name)
        if type(receiver) is SelfFact:
            if name == "training" and name not in receiver.attributes:
                return BoolFact(self.run.mode == "training")
            value = super().attribute_of(receiver, name)
            if value is None and name not in receiver.attributes:
                instance = self.run.instance(receiver)
                if instance is not None:  # `self.head_dim` of a `@property`: its getter runs
                    found = class_members.read_property(self.run, instance, name, UNHANDLED)
                    if found is UNHANDLED:  # `is_sliding = False` in the class body
                        found = class_members.class_constant(self.run, instance, name, UNHANDLED)
                    if found is not UNHANDLED:
                        return found
                method = self.run.method_of(receiver, name)
                if method is not None:
                    return method
                instance = self.run.instance(receiver)
                contents = instance.contents if instance is not None else None
                if type(contents) in (ModuleFact, Embedding):  # `class Table(nn.Embedding)`: torch's weight
                    return self.attribute_of(contents, name)
            return value
        if type(receiver) is ModuleFact and name in ("weight", "bias") or type(receiver) is Embedding and name == "weight":
            held = self.run.parameters.tensor(self.run, receiver, name)  # `self.conv1d.weight.squeeze(1)`
            if held is not None or type(receiver) is Embedding:
                return held
        if type(receiver) is Embedding:
            return None
        if type(receiver) is ModuleFact and name == "p" and self.run.parameters.dropout_p.get(id(receiver)) == 0:
            return library_values.ZERO_FLOAT  # `self.attn_dropout.p` of an nn.Dropout(0.0): memory_activations reads it
        if type(receiver) is ClassRef:
            patched = class_decorators.patched_member(self.run, receiver.source, receiver.node.name.value, name)
            if patched is not None:
                return patched
            return python_values.class_function(self.run, receiver, name)  # `MLPFactory.create_mlp(cfg)`
        if type(receiver) is ModuleRef:
            return _module_attribute(self.run, receiver, name)
        return super().attribute_of(receiver, name)

    def torch_module(self, name: str, args):
        """`torch.nn.X(...)` built from its arguments: a parameter, a container, a layer with its
        parameters; UNHANDLED for what the transfer tables build."""
        run = self.run
        last = name.rsplit(".", 1)[-1]
        if last in ("Parameter", "Buffer"):
            fact = self.eval(args.get(0, "data"))
            if last == "Parameter" and type(fact) is TensorFact:
                run.mark(fact)
                run.storage.mark_parameter(fact)
            return fact
        built = run.build_container(self, last, args)
        if built is not UNHANDLED:
            return run.parameters.constructed(run, self, last, args, built)
        if library_layers.has_parameters(name, args):
            return run.parametrised(run.parameters.constructed(run, self, last, args,
                                                               module_constructor(self, name, args)))
        if last[:1].isupper():  # a torch.nn class: its parameters are recorded (memory_parameters)
            built = module_constructor(self, name, args)
            if built is not None:
                return run.parameters.constructed(run, self, last, args, built)
        return UNHANDLED

    def torch_layer(self, name: str, args):
        """The module `torch.nn.X(...)` builds, whatever reads it (the transfer tables build linear,
        convolution and shape-preserving layers); None when not modelled."""
        built = self.torch_module(name, args)
        return module_constructor(self, name, args) if built is UNHANDLED else built

    # -- calls of the tree's code ------------------------------------------------------------------
    def call_code(self, node: cst.Call, args, name):
        run = self.run
        if name == "torch.arange":
            return torch_values.arange(self, args)
        if name in torch_values.TENSOR_FUNCTIONS:
            return torch_values.tensor_from_data(self, args)
        if name in torch_values.LIMITS_FUNCTIONS:
            return torch_values.numeric_limits(self, args)
        if name in torch_values.EAGER_CHECKS:
            return torch_values.eager_check(self, args)
        handled = known_builtins.builtin(self, node, args, name)  # builtins over known tuples, dicts, strings
        if handled is UNHANDLED and name == "functools.partial":
            handled = known_builtins.partial(self, args)
        if handled is UNHANDLED:
            handled = python_values.call_builtin(self, node, args, name)
        if handled is not UNHANDLED:
            return handled
        if name is not None and name.startswith("torch.nn."):
            return self.torch_module(name, args)
        func = node.func
        built_in = expressions.builtin_call(self, node, args)
        if built_in is not UNHANDLED:
            return built_in
        if isinstance(func, cst.Attribute) and _pure(func.value, self.env):
            receiver = self.eval(func.value)
            if type(receiver) is python_values.GrowingList and func.attr.value == "append":
                return python_values.append(self, receiver, args)
            if type(receiver) is RegistryRef:
                return registries.call_lookup(run, self, receiver, func.attr.value, args)
            if type(receiver) in (MappingFact, SequenceFact, StringFact):
                known = known_values.method_call(self, func, receiver, args)  # `kwargs.get('dim_head', 64)`
                if known is not UNHANDLED:
                    return known
            if type(receiver) in (TensorFact, RecordFact, MappingFact) or receiver is CONFIG \
                    and run.method_of(CONFIG, func.attr.value) is None:
                return UNHANDLED  # a method of a value: the transfer tables read it
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and _is_super(func.value):
            receiver = self.eval(func.value)
            method = self.attribute_of(receiver, func.attr.value)  # `super().forward(x)`
            if type(method) is FunctionRef:
                return run.call_function(self, node, method, args)
            if method is None and type(receiver) is SuperRef:
                return run.torch_super_call(self, node, receiver, func.attr.value, args)
            return UNHANDLED
        if is_checkpoint_call(name, func):
            return call_checkpoint(run, self, node, args)
        if isinstance(func, cst.Subscript) and _pure(func.value, self.env) and all(
                isinstance(e.slice, cst.Index) and expressions.is_plain(e.slice.value) for e in func.slice):
            callee = self.eval(func)  # `LLAMA_ATTENTION_CLASSES[config._attn_implementation](config=config)`, `self.h[1](x)`
        elif isinstance(func, cst.Call):
            return known_builtins.call_of_call(self, node, args)  # `maybe(self.norm)(q)`
        elif isinstance(func, cst.Attribute) and func.attr.value in module_casts.METHODS and isinstance(func.value, cst.Call):
            return module_casts.call_on_value(self, func, args)  # `Norm(d).to(dtype=torch.float32)`
        elif not _pure(func, self.env):
            if isinstance(func, cst.Subscript) and name is None:
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
        if callee is None and isinstance(func, cst.Attribute) and _pure(func.value, self.env):
            done = module_methods.call_module_method(self, self.eval(func.value), func.attr.value, args)
            if done is not UNHANDLED:
                return done
        if callee is None:
            attribute_presence.unknown_call(self, func, args, _pure)
            why = _why_unknown(self, func)
            if why is not None:  # the tree's own code that could not be read: listed, never dropped
                run.not_followed(self.ctx, node, why)
                return UNHANDLED
        if callee is None and isinstance(func, cst.Subscript):  # `self.layers[0](y)` of a list the run cannot read
            run.not_followed(self.ctx, node, "the callee is picked by a subscript whose value is not known")
            return UNHANDLED
        if callee is None and name is None and _module_like(func, self.env) and not _tensor_method(self, func):
            run.not_followed(self.ctx, node, "the callee is not known statically (defined outside the analysed "
                                             "tree, or chosen at run time)")
        return UNHANDLED


def _module_attribute(run, module: ModuleRef, name: str):
    """`c.helper` for a module of the tree: its definition (or one it imports), or a submodule."""
    found = run.tree.definition(module.source, name)
    if found is not None:
        source, definition = found
        return ClassRef(source, definition) if isinstance(definition, cst.ClassDef) else FunctionRef(source, definition)
    if name in module.source.constants:
        value = module.source.constants[name]
        return DimFact(Const(value)) if value >= 1 else None
    submodule = run.tree.submodule(module.source, name) or run.tree.module_named(module.source, name)
    return ModuleRef(submodule) if submodule is not None else None


def _why_unknown(interp, func) -> str | None:
    """Why a callee of the tree's own code is unknown: the import that names it broke on the way
    (a file missing, unreadable, outside the project root, past a limit)."""
    tree, source = interp.run.tree, interp.source
    if isinstance(func, cst.Name):
        if func.value in interp.env:
            return None
        return tree.why_not_followed(source, func.value)
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


def _pure(node, env=None) -> bool:
    """Names and attribute chains, and in them `[k]` with k an int or string literal or a name
    holding one (`self.blocks[0].gate`, `self.layers[i]`, `config.rope[kind].get`): evaluating them records no
    site and saves nothing, so a call we leave to the transfer tables can evaluate them again."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        if isinstance(node, cst.Subscript) and not (len(node.slice) == 1 and _plain_index(node.slice[0].slice, env)):
            return False
        node = node.value
    return isinstance(node, cst.Name)


def _plain_index(index, env) -> bool:
    """`[0]`, `["full"]`, `[i]` with i an int or a string: an item of a list or a dict (a tensor
    indexed so saves nothing and is a view)."""
    if not isinstance(index, cst.Index):
        return False
    if isinstance(index.value, (cst.Integer, cst.SimpleString)):
        return True
    return isinstance(index.value, cst.Name) and env is not None and \
        type(env.get(index.value.value)) in (DimFact, IntFact, StringFact, ScalarFact)  # an int of unknown value too


class FlowState:
    def __init__(self) -> None:
        self.returns: list = []
        self.returned = False
        self.raised = False  # ended by `raise`: a path that yields no result


class ModelFlow(FunctionFlow):
    def __init__(self, ctx, env: dict, *, run, source, state: FlowState | None = None, autocast=None) -> None:
        super().__init__(ctx, env, autocast=autocast)
        self.run_ = run
        self.source = source
        self.state = state or FlowState()
        self.side_raised = False  # the branch side run last ended by `raise`
        self.continuation = None  # entries of the side of an undecided `if` that did not return
        self.evaluator = ModelEvaluator(ctx, env, autocast, run=run, source=source)

    def _with_env(self, env: dict, autocast=None) -> "ModelFlow":
        return ModelFlow(self.ctx, env, run=self.run_, source=self.source, state=self.state,
                         autocast=autocast or self.autocast)

    def run(self, statements) -> None:
        budget = self.run_.budget
        statements = list(statements)
        for position, statement in enumerate(statements):
            if self.state.returned:
                return
            if not budget.spend("steps"):  # bounded work: the rest of the run is cut, and listed
                self.run_.budget_cut(self.ctx, statement, "steps")
                return
            self.continuation = None
            self.statement(statement)
            self.run_.live.settle(self.env, statement)  # what each name holds now (memory_live)
            if self.continuation is not None:
                # `if cond: return a` undecided: what follows runs only on the side that did not
                # return, so its entries are that side's, not added to both (the Choice's max)
                continuation, self.continuation = self.continuation, None
                with self.run_.collecting(continuation):
                    self.run(statements[position + 1:])
                return

    def statement(self, node) -> None:
        if isinstance(node, cst.FunctionDef):
            self.env[node.name.value] = FunctionRef(self.source, node, closure=self.env)
        elif isinstance(node, cst.ClassDef):
            self.env.pop(node.name.value, None)
        else:
            super().statement(node)

    def _assign_statement(self, node, line) -> None:
        frames = self.run_.grad_frames
        frames.append(None)
        try:
            super()._assign_statement(node, line)
        finally:
            tainted = frames.pop()
        for target in node.targets:
            for name in python_values.target_names(target.target):
                if tainted and self.run_.mode == "training":
                    self.env[GRAD_TAINT + name] = tainted  # what the bound value was computed from
                    self.run_.mark(self.env.get(name), tainted)  # a shape comment may have replaced the fact
                else:
                    self.env.pop(GRAD_TAINT + name, None)

    def _augmented_assign(self, node) -> None:
        """`h += self.attn(x)`: the new `h` is computed from the old one and the value."""
        frames = self.run_.grad_frames
        frames.append(None)
        try:
            self._augmented_value(node)
        finally:
            tainted = frames.pop()
        if tainted and self.run_.mode == "training":
            for name in python_values.target_names(node.target):
                self.env[GRAD_TAINT + name] = tainted
            if expressions.is_plain(node.target):
                self.run_.mark(self.evaluator.eval(node.target), tainted)
        flow_into(frames, tainted)  # an enclosing expression (a callee's caller) as before

    def assign(self, target, fact, value_node) -> None:
        if isinstance(target, cst.Subscript) and known_values.store_item(self.evaluator, target, fact):
            return  # `kwargs['k'] = v` on a known dict
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            receiver = self.env.get(target.value.value)
            if type(receiver) is ClassRef:  # `experts_class.forward = forward` in a class decorator
                key = class_decorators.class_key(receiver.source, receiver.node.name.value)
                self.run_.class_patches.setdefault(key, {})[target.attr.value] = fact
                return
        super().assign(target, fact, value_node)
        self.run_.parameters.tie(self.evaluator, target, value_node)  # `a.weight = b.weight`

    def _annotated_assign(self, node) -> None:
        """`self.W_U: Float[Tensor, "d_model d_vocab"] = nn.Parameter(...)`: the annotation's fact
        replaces the value's, and carries its gradient."""
        frames = self.run_.grad_frames
        frames.append(None)
        try:
            super()._annotated_assign(node)
        finally:
            tainted = frames.pop()
        if not (tainted and self.run_.mode == "training"):
            for name in python_values.target_names(node.target):
                self.env.pop(GRAD_TAINT + name, None)
            return
        for name in python_values.target_names(node.target):
            self.env[GRAD_TAINT + name] = tainted
        if expressions.is_plain(node.target):
            self.run_.mark(self.evaluator.eval(node.target), tainted)

    def small_statement(self, node, line) -> None:
        if isinstance(node, cst.Del):
            for element in node.target.elements if isinstance(node.target, cst.Tuple) else [node.target]:
                known_values.forget_deleted(self.evaluator, getattr(element, "value", element))
        if isinstance(node, cst.Raise):
            self.evaluator.walk(node)
            self.state.returned = self.state.raised = True
            return
        super().small_statement(node, line)

    def _return(self, node: cst.Return) -> None:
        fact = self.evaluator.eval(node.value) if node.value is not None else NONE
        self.state.returns.append(fact)
        self.state.returned = True

    def _side(self, block, env: dict):
        """Run one side of a branch with its own `returned` flag: (env, returned)."""
        flow = ModelFlow(self.ctx, env, run=self.run_, source=self.source, state=FlowState(),
                         autocast=self.autocast)
        body = block.body if isinstance(block, cst.IndentedBlock) else None
        if body is None:
            for small in block.body:
                flow.small_statement(small, None)
        else:
            flow.run(body)
        self.state.returns.extend(flow.state.returns)
        self.side_raised = flow.state.raised and not flow.state.returns
        return flow.env, flow.state.returned

    def _else_side(self, node: cst.If, env: dict):
        if node.orelse is None:
            self.side_raised = False
            return env, False
        if isinstance(node.orelse, cst.If):
            flow = ModelFlow(self.ctx, env, run=self.run_, source=self.source, state=FlowState(),
                             autocast=self.autocast)
            flow._if(node.orelse)
            self.state.returns.extend(flow.state.returns)
            self.side_raised = flow.state.raised and not flow.state.returns
            return flow.env, flow.state.returned
        return self._side(node.orelse.body, env)

    def _grad_signature(self, env: dict) -> dict:
        return {name: self.run_.needs_grad(value) or bool(env.get(GRAD_TAINT + name))
                for name, value in env.items() if not name.startswith(GRAD_TAINT)}

    def _unpack(self, target, fact, value_node) -> None:
        """`y, *rest = pair` and `_, x = pair` from a known sequence; anything else as before."""
        if type(fact) is ModuleList and fact.count is None:
            fact = SequenceFact(fact.items)  # `for attn, ff in self.layers`: a pair of modules per layer
        elements = target.elements
        starred = [i for i, e in enumerate(elements) if isinstance(e, cst.StarredElement)]
        if len(starred) == 1 and type(fact) is SequenceFact and len(fact.items) >= len(elements) - 1:
            star = starred[0]
            tail = len(elements) - star - 1
            items = fact.items
            for element, item in zip(elements[:star], items[:star]):
                self.assign(element.value, item, None)
            self.assign(elements[star].value, SequenceFact(items[star:len(items) - tail]), None)
            for element, item in zip(elements[star + 1:], items[len(items) - tail:]):
                self.assign(element.value, item, None)
            return
        super()._unpack(target, fact, value_node)

    def _augmented_value(self, node) -> None:
        binary = _BITWISE_ASSIGN.get(type(node.operator))
        if binary is None:
            return super()._augmented_assign(node)
        left, right = self.evaluator.eval(node.target), self.evaluator.eval(node.value)
        self.assign(node.target, self.evaluator.arithmetic(binary(), left, right), None)  # `flag |= other`

    def _if(self, node: cst.If) -> None:
        decision = self.run_.decide(self.evaluator, node.test)
        if decision is True:
            env, returned = self._side(node.body, dict(self.env))
        elif decision is False:
            env, returned = self._else_side(node, dict(self.env))
        else:
            then_entries, else_entries = [], []
            on_true, on_false = optional_values.narrowed(node.test, self.env)
            owner = self.env.get("self")
            owner = owner if type(owner) is SelfFact else None
            before = dict(owner.attributes) if owner is not None else None
            with self.run_.collecting(then_entries):
                then_env, then_returned = self._side(node.body, {**self.env, **on_true})
            then_raised = self.side_raised
            then_attributes = None
            if owner is not None:  # `self.x = ...` on each side: each side starts from what was before
                then_attributes = dict(owner.attributes)
                owner.attributes.clear()
                owner.attributes.update(before)
            with self.run_.collecting(else_entries):
                else_env, else_returned = self._else_side(node, {**self.env, **on_false})
            if owner is not None:
                _merge_attributes(self.run_, owner, then_attributes, " ".join(self.ctx.code(node.test).split()))
            if then_raised != self.side_raised:
                # one side raises: a run that yields a result takes the other (`if x is None: raise`)
                self.run_.entries.extend(else_entries if then_raised else then_entries)
                env, returned = (else_env, else_returned) if then_raised else (then_env, then_returned)
                self._set_env(env)
                self.state.returned = self.state.returned or returned
                return
            self.run_.add(Choice(self.ctx.code(node.test), (then_entries, else_entries)))
            self.run_.note_undecided(self.ctx.code(node.test))
            if then_returned and not else_returned:
                env = else_env
                self.continuation = else_entries
            elif else_returned and not then_returned:
                env = then_env
                self.continuation = then_entries
            else:
                env = merge_sides(self.run_, then_env, else_env, self.ctx.settings.sizes,
                                  " ".join(self.ctx.code(node.test).split()))
                self.run_.shape_loss.merged(self.ctx, node, then_env, else_env, env)
            returned = then_returned and else_returned
        self._set_env(env)
        self.state.returned = self.state.returned or returned

    def _loop(self, node) -> None:
        if isinstance(node, cst.For):
            enumerated = expressions.enumerated(node.iter, self.env)  # `for i, layer in enumerate(self.h)`
            iterated = self.evaluator.eval(enumerated if enumerated is not None else node.iter)
            iterated = class_members.protocol_items(self.evaluator, iterated)  # a Sequence class of the tree
            if type(iterated) is python_values.GrowingList:
                iterated = iterated.as_module_list()
            element, count, reason = None, None, "loop trip count is not known statically"
            index = None  # the int a repeated module list was built with (loop_indices)
            if python_values.unrollable(iterated):
                items = iterated.items if enumerated is None else known_values.index_pairs(iterated.items)
                python_values.unrolled_loop(self, node, items)
                return
            known = known_iteration.loop_items(iterated, node, enumerated is not None, self.env,
                                               building=self.run_.building > 0)
            if known is not None:  # a known tuple, list or dict: each item in turn
                python_values.unrolled_loop(self, node, known)
                return
            if type(iterated) is ModuleList:
                if iterated.count is not None:
                    element, count, index = iterated.items[0], iterated.count, iterated.index
                elif iterated.items and all(i is iterated.items[0] for i in iterated.items):
                    element, count = iterated.items[0], Const(len(iterated.items))
            elif isinstance(node.iter, cst.Call) and isinstance(node.iter.func, cst.Name) \
                    and node.iter.func.value == "range" and len(node.iter.args) == 1:
                count = self.evaluator.dim_of(node.iter.args[0].value)
                element = ScalarFact()  # an int: `w[i]` drops a dim
            if count is not None and (enumerated is not None or type(element) is ScalarFact):
                # the body reads the index: each index in turn (a ModuleList under enumerate, or range)
                indexed = known_iteration.indexed_items(node, element if enumerated is not None else None, count,
                                                        self.ctx.settings.sizes)
                if indexed is not None:
                    python_values.unrolled_loop(self, node, indexed, index if enumerated is not None else None)
                    return
            if enumerated is not None:
                element = SequenceFact((None, element)) if element is not None else None
            body_env = dict(self.env)
            self._with_env(body_env).assign(node.target, element, None)
        else:
            self.evaluator.eval(node.test)
            body_env, count, reason, index = dict(self.env), None, "while loop: trip count is not known statically", None
        before = self._grad_signature(body_env)
        repeat = Repeat(count, [], None if count is not None else reason)
        indices = self.run_.loop_indices
        trips = known_count(count, self.ctx.settings.sizes) if index is not None else None
        index = index if trips else None  # a pass stands for executions [start, stop) of a known count
        offset = 0
        with indices.covering(index, 0, trips or 0) as covered:
            entry_env, body_env = self._pass(node, repeat, body_env, count)
        if count is not None and self._grad_signature(body_env) != before and self.run_.mode == "training":
            # the first pass made a loop-carried tensor need a gradient (`x` from an entry input
            # through a parameter): the first iteration costs what it did, the rest cost more
            rest = Repeat(simplify_dim(BinOp("-", count, Const(1))), [])
            repeat.count = Const(1)
            if covered is not None:
                covered.stop = 1
            self.run_.add(repeat)
            self._with_env(body_env).assign(node.target, element, None)
            offset = 1
            with indices.covering(index, 1, trips or 0) as covered:
                entry_env, body_env = self._pass(node, rest, body_env, count)
            repeat = rest
        changed = None if count is None else known_iteration.reshaped_carry(entry_env, body_env, self.ctx.settings.sizes)
        if changed is not None:  # `repeat.count`: the passes left (count - 1 after a split)
            if covered is not None:
                covered.stop = covered.start + 1
            body_env = self._pass_by_pass(node, element, repeat.count, repeat, body_env, changed, index, offset)
        else:
            self.run_.add(repeat)
        if index is not None:
            indices.finish(index, self.run_)
        # a loop over n >= 1 modules runs its body: what it leaves is the body's env
        known = count is not None and _at_least_one(count, self.ctx.settings.sizes)
        merged = body_env if known else merge_sides(self.run_, self.env, body_env, self.ctx.settings.sizes)
        if node.orelse is not None:
            merged = self._block(node.orelse.body, merged)
        self._set_env(merged)

    def _pass(self, node, repeat: Repeat, body_env: dict, loop_count) -> tuple[dict, dict]:
        """One run of the loop body, its entries into `repeat`: (the env it found, the env it left)."""
        entry_env = dict(body_env)
        with self.run_.collecting(repeat.entries), self.run_.in_loop(loop_count):
            self.run_.live.loop_entry(body_env)  # what the names hold where the body starts (memory_live)
            body_env = self._block(node.body, body_env)
        repeat.carried = self.run_.storage.carried(entry_env, body_env)
        return entry_env, body_env

    def _pass_by_pass(self, node, element, count, first: Repeat, body_env: dict, changed: str,
                      index=None, offset: int = 0) -> dict:
        """A loop whose carried value changes shape (`h = torch.cat([h, y], 1)`) costs each pass as it
        runs: the first pass once, then each further pass from what the one before left, until a pass
        leaves the shapes it found (the rest repeat it). An unknown or too large count: the passes
        after the first are unresolved, with why — never the first pass's cost times the count."""
        sizes = self.ctx.settings.sizes
        trips = known_count(count, sizes)
        first.count = Const(1)
        self.run_.add(first)
        if trips is None or trips > python_values.MAX_UNROLLED:
            reason = (f"`{changed}` changes shape from pass to pass and the trip count is not a known number of "
                      f"at most {python_values.MAX_UNROLLED}: the passes after the first cost differently")
            self.run_.add(Repeat(None, first.entries, reason))
            return body_env
        for done in range(1, trips):
            self._with_env(body_env).assign(node.target, element, None)
            one = Repeat(Const(1), [])
            with self.run_.loop_indices.covering(index, offset + done, offset + done + 1) as covered:
                entry_env, body_env = self._pass(node, one, body_env, Const(1))
            if known_iteration.reshaped_carry(entry_env, body_env, sizes) is None:
                one.count = Const(trips - done)  # a pass that keeps the shapes: the rest are the same
                if covered is not None:
                    covered.stop = offset + trips
                self.run_.add(one)
                break
            self.run_.add(one)
        return body_env


_BITWISE_ASSIGN = {cst.BitOrAssign: cst.BitOr, cst.BitAndAssign: cst.BitAnd, cst.BitXorAssign: cst.BitXor,
                   cst.ModuloAssign: cst.Modulo}


def merge_sides(run, a: dict, b: dict, sizes, condition: str | None = None) -> dict:
    """What two paths leave (merge_envs); a value needs a gradient when it does on either path, as
    the dearer side is the one costed (a norm that upcasts under an undecided dtype check still
    passes its input's gradient on). Two different functions a name holds after an undecided
    `if` are a CallableChoice: calling it runs each (`mask_fn = and_masks(mask_fn, extra)` under
    `if extra is not None`), so the call's result is what both agree on, never unknown by fiat."""
    merged = merge_envs(a, b, sizes)
    for name in a.keys() & b.keys():
        if merged.get(name) is None:
            merged[name] = optional_values.join_optional(a[name], b[name])
    if condition is not None:
        for name in a.keys() & b.keys():
            if merged.get(name) is None and _callable_value(a[name]) and _callable_value(b[name]):
                sides = tuple(side for value in (a[name], b[name])
                              for side in (value.sides if type(value) is CallableChoice else (value,)))
                merged[name] = CallableChoice(condition, sides)
    for name, value in merged.items():
        if name in a and name in b and (run.needs_grad(a[name]) or run.needs_grad(b[name])):
            sides = [side for side in (a[name], b[name]) if run.needs_grad(side)]
            if value is not a[name]:
                run.mark(value, sides, merge=True)  # the joined value is either side's
            elif value is not b[name]:
                run.grad_flow.merge(value, sides)
    for key in {*a, *b}:
        if key.startswith(GRAD_TAINT) and (a.get(key) or b.get(key)):
            merged[key] = union(a.get(key), b.get(key))
    return merged


def _merge_attributes(run, owner: SelfFact, then_attributes: dict, condition: str) -> None:
    """`self.mlp = SparseMoe(c) if ... else MLP(c)` written as an undecided `if`: an attribute the two
    sides set to different modules holds a ModuleChoice of both (each costed where it is called),
    other differing values what both agree on — never the last side's value by fiat."""
    else_attributes = owner.attributes
    for name in then_attributes.keys() ^ else_attributes.keys():
        run.maybe_attributes.add((id(owner), name))  # set on one side only: hasattr cannot tell
    for name, value in then_attributes.items():
        other = else_attributes.get(name, value)
        if other is value:
            else_attributes[name] = value
            continue
        picked = choices.module_choice([value, other], condition)
        if picked is None:
            picked = merge_facts(value, other, run.sizes) or optional_values.join_optional(value, other)
        else_attributes[name] = picked


def _callable_value(value) -> bool:
    return type(value) in (FunctionRef, ClassRef, CallableChoice, python_values.Partial)


def _at_least_one(dim, sizes) -> bool:
    try:
        value = evaluate_dim(dim, sizes)
    except Exception:  # noqa: BLE001 - an unbound dim is simply not known to be >= 1
        return False
    return value is not None and value >= 1


def _returned_by_tree_code(run, node, fact) -> bool:
    """`self.rotary_emb(x, ids)`: a call of the tree's own code whose result it computed (memory:
    `cos, sin` made from position ids need no gradient though `x` does)."""
    if not isinstance(node, cst.Call) or type(fact) not in (TensorFact, SequenceFact):
        return False
    callee = run.storage.seen.get(id(node.func))
    return type(callee) is FunctionRef or (type(callee) is SelfFact and run.instance(callee) is not None)


def _grad_items(run, fact) -> list:
    items = fact.items if type(fact) is SequenceFact else (fact,)
    return [item for item in items if type(item) is TensorFact and run.needs_grad(item)]
