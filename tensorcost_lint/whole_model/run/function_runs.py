"""One function of the tree run on bound arguments: its parameters bound (defaults, `**options`,
shape annotations as contracts, a config object's missing parameters as dims), its body run by a
ModelFlow, and its returns joined into one result. A mixin of ModelRun (model_run.py), called by the
calls in code_calls.py."""

from __future__ import annotations

import libcst as cst

from shape_annotations import Sym

from ...analysis.facts import CONFIG_NAMES, merge_facts, DimFact, ScalarFact, SequenceFact, TensorFact
from ...analysis.annotations import facts_from_annotation, single_fact
from ...analysis.function_flow import is_static
from ..python import call_binding
from . import choices, module_globals
from .model_evaluator import ModelEvaluator
from .model_flow import ModelFlow
from ..values.objects import NONE, ClassRef
from ..values.optional_values import join_optional
from ..python.gradient_flow import OPAQUE


class FunctionRuns:
    """ModelRun's function bodies: `_run_function` and the binding of its parameters (`_bind`)."""

    def _run_function(self, source, node: cst.FunctionDef, self_fact, positional, keywords, read_missing_as_dims,
                      closure=None, unknown_with_grad=frozenset()):
        env = self._bind(source, node, self_fact, positional, keywords, read_missing_as_dims, unknown_with_grad)
        if closure is not None:
            env = {**closure, **env}  # the enclosing function's names, its own parameters over them
        globals_frame = module_globals.enter(self, source, node, env)  # `global NAME`: the module's binding
        flow = ModelFlow(source.ctx, env, run=self, source=source)
        self.frames.append((node, self_fact))  # what `super()` means inside
        without_grad = disables_grad(source.ctx, node)
        self.no_grad += without_grad
        self.live.enter(env)  # its parameters are names it holds (memory_live)
        try:
            if isinstance(node.body, cst.IndentedBlock):
                flow.run(node.body.body)
            else:
                for small in node.body.body:
                    flow.small_statement(small, None)
        finally:
            self.live.leave()
            self.frames.pop()
            self.no_grad -= without_grad
            module_globals.leave(self, globals_frame, flow.env, not flow.state.returned)
        returns = [r for r in flow.state.returns]
        if not returns:
            return NONE
        result = choices.module_choice(returns, f"the module `{node.name.value}()` returns") \
            if len(returns) > 1 else None  # undecided branches returning different modules: each costed
        if result is not None:
            return result
        result = returns[0]
        for other in returns[1:]:  # an undecided branch returns on one side: what both agree on
            if other is not result:
                result = merge_facts(result, other, self.sizes) or join_optional(result, other)
        if any(self.needs_grad(r) for r in returns):
            self.mark(result, returns, merge=True)
        return result

    def _bind(self, source, node, self_fact, positional, keywords, read_missing_as_dims,
              unknown_with_grad=frozenset()) -> dict:
        params = node.params
        ordered = [*params.posonly_params, *params.params]
        env: dict = {}
        if is_static(node):
            instance = self.instance(self_fact) if self_fact is not None and ordered else None
            if instance is not None and _decorated(node, "classmethod"):
                env[ordered[0].name.value] = ClassRef(instance.source, instance.cls)  # `self._merge(...)`: cls is its class
                ordered = ordered[1:]
            self_fact = None  # a @staticmethod read through `self` binds nothing to its first parameter
        if self_fact is not None and ordered:
            env[ordered[0].name.value] = self_fact
            ordered = ordered[1:]
        defaults = ModelEvaluator(source.ctx, {}, run=self, source=source)
        splice = next((i for i, value in enumerate(positional) if type(value) is call_binding.Splice), None)
        star_value = None  # what `*args` receives
        if splice is not None:  # `f(a, *items)` of unknown length: a parameter from there on is unknown
            whole = positional[splice].collection if splice == len(ordered) == len(positional) - 1 else None
            star_value = whole  # `Parallel(*[Block() for _ in range(n)])`: `*fns` is the n blocks
            positional = [*positional[:splice], *[None] * max(len(ordered) - splice, 0)]
        else:
            star_value = SequenceFact(tuple(positional[len(ordered):]))
        for index, param in enumerate([*ordered, *params.kwonly_params]):
            name = param.name.value
            carries_grad = False  # an unknown argument computed from a tensor that needs a gradient
            if index < len(ordered) and index < len(positional):
                env[name] = positional[index]
                carries_grad = index in unknown_with_grad
            elif name in keywords:
                env[name] = keywords[name]
                carries_grad = name in unknown_with_grad
            elif call_binding.UNKNOWN_REST in keywords and index >= len(positional) and param.default is not None:
                env[name] = None  # `**options` the run cannot read may set it: not its default
            elif param.default is not None:
                env[name] = defaults.eval(param.default)
            elif name in CONFIG_NAMES:
                continue  # a config object not given: its attributes are dims (`config.n_embd`)
            elif read_missing_as_dims:
                env[name] = DimFact(Sym(name))  # a constructor parameter without default: the dim of its name
            else:
                env[name] = None
            if env.get(name) is None and _annotated_float(param):
                env[name] = ScalarFact()  # `drop_prob: float`: a number, whatever its value
            if param.annotation is not None and _shape_unknown(env.get(name)):
                declared = _declared_tensor(source.ctx, param.annotation.annotation)
                if declared is not None:  # `q: Float[Tensor, "batch pos head d_head"]`: the contract
                    if self.needs_grad(env.get(name)) or carries_grad:
                        # the annotation stands for the argument: its sources, or unknown ones
                        self.mark(declared, [env.get(name) if self.needs_grad(env.get(name)) else OPAQUE])
                    env[name] = declared
        if isinstance(params.star_arg, cst.Param):
            env[params.star_arg.name.value] = star_value
        call_binding.bind_extra_keywords(env, params, keywords)
        return env


_NO_GRAD = ("torch.no_grad", "torch.inference_mode", "torch.autograd.grad_mode.no_grad")


def _decorated(node: cst.FunctionDef, name: str) -> bool:
    return any(type(d.decorator) is cst.Name and d.decorator.value == name for d in node.decorators)


def disables_grad(ctx, node: cst.FunctionDef) -> int:
    """1 for a function decorated `@torch.no_grad()` / `@torch.inference_mode()`: FlopCounterMode
    sees no backward of what runs inside."""
    for decorator in node.decorators:
        target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        if ctx.settings.imports.resolve(target) in _NO_GRAD:
            return 1
    return 0


def _shape_unknown(fact) -> bool:
    return fact is None or type(fact) is TensorFact and fact.shape is None


def _declared_tensor(ctx, annotation):
    """The tensor a parameter's shape annotation declares (jaxtyping, torchtyping), or None."""
    fact = single_fact(facts_from_annotation(annotation, ctx))
    return fact if type(fact) is TensorFact and fact.shape is not None else None


def _annotated_float(param) -> bool:
    annotation = param.annotation
    return annotation is not None and isinstance(annotation.annotation, cst.Name) \
        and annotation.annotation.value == "float"
