"""The per-file evaluator, extended for a whole-model run through the interpreter protocol: names the
tree defines or imports, Python values (ints, floats, strings, dicts, comprehensions), attributes of
objects the run built, torch modules built from their arguments, and gradient marks on every tensor
an expression computes. Calls of the tree's code are dispatched in call_dispatch.py."""

from __future__ import annotations

from contextlib import contextmanager

import libcst as cst

from shape_annotations import Const

from ...analysis import op_table
from ...analysis.given_values import Bound, Given
from ...analysis.evaluator import Evaluator
from ...analysis.calls import module_constructor
from ...analysis.site_registry import FUNCTIONS as SITE_FUNCTIONS
from ...analysis.facts import DimFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, StringFact, TensorFact
from ...analysis.interpreter import UNHANDLED
from ...analysis.literals import int_value
from ..library import backward_matmuls, library_values, object_attributes, parameter_containers, torch_values
from ..python import builtin_functions, class_decorators, class_members, known_containers, known_floats, \
    known_iteration, known_math, known_values, python_values, registries, string_format
from . import decisions, expressions
from ..values import dim_unification, lambdas, library_layers
from ..source import module_bindings
from .call_dispatch import CallDispatch
from ..values.library_objects import IntFact, MappingFact, RecordFact, RegistryRef, SuperRef, TorchFunction
from ..python.gradient_flow import cuts_gradient, flow_into, grad_items, returned_by_tree_code, updated_in_place
from ..python.repeated_data import repeated_items
from ..values.objects import NONE, BoolFact, ClassRef, Embedding, FunctionRef, Instance, ModuleDict, ModuleRef

GRAD_TAINT = "\0grad:"  # env key: a name bound from a value computed from gradient-carrying tensors
_CONSTANTS = {"True": BoolFact(True), "False": BoolFact(False), "None": NONE}


class ModelEvaluator(CallDispatch, Evaluator):
    def __init__(self, ctx, env: dict, autocast=None, *, run, source, top_line=None) -> None:
        super().__init__(ctx, env, autocast)
        self.run, self.source = run, source
        self.top_line = top_line  # a module's top level (its comprehensions too): the line it has run to (module_order)

    def eval(self, node):
        # written as one method (one Python frame per expression level): model code nests calls 64
        # deep, each of many levels, under the interpreter's recursion limit
        kind = type(node)
        if kind is Given:
            return node.value  # evaluated by the caller, its flows and records made there
        loss, frames = self.run.shape_loss, self.run.grad_frames
        loss.frames.append(None)
        try:
            frames.append(None)
            try:
                fact = node.value if kind is Bound else super().eval(node)  # Bound: read as a name is
            finally:
                flowed = frames.pop()  # the tensors needing a gradient this expression read or made
            if flowed and (self.run.no_grad or cuts_gradient(self, node)):
                flowed = None  # `torch.zeros_like(h)`, `h.detach()`, under `no_grad`: outside the graph
            if not python_values.is_metadata(node):  # `x.shape`, `x.device`: no gradient flows through them
                run = self.run
                run.storage.observe(self, node, fact)
                run.grad_flow.settle(node, fact, run.building == 0 and not run.no_grad)
                by_tree_code = bool(flowed) and returned_by_tree_code(run, node, fact)
                if by_tree_code:
                    # the callee's own ops marked what needs one, and what each was computed from
                    flowed = grad_items(run, fact)
                merge = type(node) is cst.Call  # `x.add_(y)` returns x, now computed from y too
                if flowed and type(fact) is TensorFact:
                    run.mark(fact, flowed, merge)  # computed from a tensor that needs a gradient
                    updated_in_place(run, self, node, flowed)
                elif flowed and type(fact) is SequenceFact and not by_tree_code and type(node) not in (cst.Tuple, cst.List):
                    # an op's tuple (each item from every operand); one the tree's code returns (`return out,
                    # state`) or a display (`q_in, k_in = x, context`) holds items each computed from its own
                    for item in fact.items:  # `q, k, v = self.c_attn(x).split(...)`
                        run.mark(item, flowed, merge)
                run.saved_ops.observe(run, self, node, fact)  # what the op saves (memory_activations)
                backward_matmuls.observe(run, self, node, fact)  # a matmul only its backward runs
                run.live.observe(self, node, fact)  # what the op reads (memory_live)
                if frames:
                    # a tensor stands for what it was computed from; any other value (an output
                    # record, a dict) passes on what flowed into it
                    flow_into(frames, grad_items(run, fact) or flowed)
                    if type(node) is cst.Name and not run.no_grad:  # (not isinstance: LibCST's ABCs are slow)
                        flow_into(frames, self.env.get(GRAD_TAINT + node.value))
            loss.settle(self.ctx, node, fact, self.run.loss_reason)
            if (fact is None or type(fact) is TensorFact and fact.shape is None) and kind is not cst.Name \
                    and kind is not Bound:
                self.run.doubts += 1  # what the run could not evaluate (or shape) may have raised
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
            value = self.run.module_value(self.source, node.value, self.top_line)
            if value is None and self.run.tree.is_import(self.source, node.value):
                module = self.run.tree.module_named(self.source, node.value)  # `from . import c`
                return ModuleRef(module) if module is not None else None
            return value if value is not None else builtin_functions.builtin_function(self, node.value)
        return fact

    def with_env(self, env: dict) -> "ModelEvaluator":
        return ModelEvaluator(self.ctx, env, self.autocast, run=self.run, source=self.source, top_line=self.top_line)

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
            if type(fact) is ScalarFact:
                return known_floats.negated(self.run, fact)  # `-3.5`: its value kept, as `3.5`'s is
            return fact.with_shape(fact.shape) if type(fact) is TensorFact else (ScalarFact() if type(fact) is DimFact else None)
        return super()._eval_UnaryOperation(node)

    def _eval_Lambda(self, node: cst.Lambda):
        return lambdas.lambda_function(self, node)

    def _eval_IfExp(self, node: cst.IfExp):
        return python_values.conditional(self, node)

    def _eval_Comparison(self, node):
        if len(node.comparisons) == 1 and all(expressions.is_plain(n) for n in (node.left, node.comparisons[0].comparator)):
            decided = self.run.decide(self, node)  # `is_cross_attention = encoder_hidden_states is not None`
            if decided is not None:
                return BoolFact(decided)
        known = class_members.contains(self, node)  # `type(config) in self._registry` runs `__contains__`
        if known is not UNHANDLED:
            return known
        known = decisions.compare_known(self, node)  # `(num % den) == 0`, `ind == len(layers) - 1`
        result = super()._eval_Comparison(node) if known is UNHANDLED else known  # evaluated once, known or not
        if type(result) is not BoolFact:  # `use_bias=layer_idx == n - 1`: a repeated layer's own index decides it
            self.run.loop_indices.undecided(self, node)
        return result

    def unify_dims(self, node, undecided) -> bool:
        return dim_unification.unify(self.run, self.ctx, node, undecided)

    def module_parameter(self, module, name: str, shape: tuple, dtype):
        """The module's parameter (it needs a gradient); a slice of it (one projection of a packed
        in_proj_weight) is a new fact computed from it, its storage the parameter's kind."""
        run = self.run
        held = run.parameters.tensor(run, module, name)
        if type(held) is not TensorFact:
            return super().module_parameter(module, name, shape, dtype)
        if held.shape is not None and tuple(held.shape) == tuple(shape):
            return held
        part = TensorFact(shape, held.dtype, framework="torch")
        run.storage.mark_parameter(part)
        run.mark(part, [held])
        return part

    def derived(self, fact, sources) -> None:
        if any(self.run.needs_grad(source) for source in sources):
            self.run.mark(fact, list(sources))

    @contextmanager
    def module_scope(self, module):
        run = self.run
        outer = run.module
        run.module = run.paths.get(module, outer)
        try:
            yield
        finally:
            run.module = outer

    def listed_items(self, fact):
        if type(fact) is python_values.GrowingList:
            return known_values.appended_items(fact)  # what `torch.cat(outs)` reads
        return super().listed_items(fact)

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
        return python_values.comprehension(self, node, repeated_items) if known is UNHANDLED else known

    def _eval_GeneratorExp(self, node: cst.GeneratorExp):
        known = known_iteration.comprehension(self, node)
        return python_values.comprehension(self, node, repeated_items) if known is UNHANDLED else known

    def _eval_Set(self, node: cst.Set):
        return known_containers.set_display(self, node)  # `{BatchNormAct, GroupNormAct}`

    def _eval_SetComp(self, node: cst.SetComp):
        known = known_iteration.comprehension(self, node)  # each element, then each distinct one once
        if known is UNHANDLED or known is None:
            if known is UNHANDLED:
                self.walk(node)
            return None
        return known_containers.distinct_items(self, known.items)

    def _eval_DictComp(self, node: cst.DictComp):
        known = known_iteration.comprehension(self, node)
        if known is UNHANDLED:
            self.walk(node)
            return None
        return known

    def _eval_Subscript(self, node):
        known = module_bindings.sys_module(self, node)  # `sys.modules["pkg.c"]`
        if known is UNHANDLED:
            known = class_members.item(self, node)  # `registry[type(config)]` runs `__getitem__`
        if known is UNHANDLED:
            known = known_values.subscript(self, node)  # `seq[i]` with a known int i, `key[n:]` of a string
        return expressions.subscript(self, node) if known is UNHANDLED else known

    def arithmetic(self, operator, left, right):
        if isinstance(operator, cst.Modulo) and type(left) is StringFact:
            return string_format.percent(self.run, left, right)  # `"layer%d" % (i + 1)`
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
                (resolved in op_table.FUNCTIONS or resolved in SITE_FUNCTIONS):
            return TorchFunction(resolved)  # `self.act = nn.functional.gelu`: a function as a value
        return super()._eval_Attribute(node)

    def attribute_of(self, receiver, name: str):
        if receiver is torch_values.NUMERIC_LIMITS:
            return torch_values.limit_attribute(name)
        if type(receiver) is TensorFact and name == "ndim":
            return known_values.rank(receiver)  # `'b j d' if k.ndim == 3 else 'b h j d'`
        if type(receiver) is TensorFact and name == "device":
            return torch_values.DEVICE
        found = object_attributes.own_lookup(self.run, receiver, name)  # `config.x`, a copy's, `obj.__dict__`
        if found is not UNHANDLED:
            return found
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
        if type(receiver) is ModuleFact and name == "p" and id(receiver) in self.run.parameters.dropout_p:
            p = self.run.parameters.dropout_p[id(receiver)]  # `self.attn_dropout.p` of an nn.Dropout(0.1)
            return library_values.ZERO_FLOAT if p == 0 else self.run.floats.make(p)  # `self.attn_dropout.p` of an nn.Dropout(0.0): memory_activations reads it
        if type(receiver) is ClassRef:
            patched = class_decorators.patched_member(self.run, receiver.source, receiver.node.name.value, name)
            if patched is not None:
                return patched
            found = python_values.class_function(self.run, receiver, name)  # `MLPFactory.create_mlp(cfg)`
            if found is not None:
                return found
            if name == "__name__":
                return StringFact(receiver.node.name.value)
            # what the class (or a base) assigns: `BasicBlock.expansion`, as Python reads it off the class
            as_instance = Instance(receiver.source, receiver.node, None)
            found = class_members.class_constant(self.run, as_instance, name, UNHANDLED)
            return class_members.class_value(self.run, as_instance, name) if found is UNHANDLED else found
        if type(receiver) is ModuleRef:
            return module_bindings.module_attribute(self.run, receiver, name)
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
        if last in parameter_containers.CONTAINERS:
            return parameter_containers.build(self, last, args)
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
