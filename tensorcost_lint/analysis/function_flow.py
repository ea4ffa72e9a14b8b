"""Forward flow of facts through a function's statements.

Assignments bind facts; annotations and shape comments declare them (a contradiction with what the
code implies is a Contradiction); branches keep only what both sides agree on; loop bodies run once and
merge with the state before the loop, since they may run zero times.
"""

from __future__ import annotations

import libcst as cst

from shape_annotations import ShapeError, Sym, parse_shape_comment

from .annotations import facts_from_annotation, single_fact
from .call_sites import record_matmul_operator
from .evaluator import Evaluator
from .facts import COMMENT, DimFact, DTypeFact, SelfFact, SequenceFact, StringFact, TensorFact, merge_facts
from .contracts import reconcile
from .imports import dotted_name
from .problems import Unparseable


def merge_envs(a: dict, b: dict, sizes) -> dict:
    merged = {}
    for name in a.keys() & b.keys():
        merged[name] = a[name] if a[name] is b[name] else merge_facts(a[name], b[name], sizes)
    for name, value in list(a.items()) + list(b.items()):
        if type(value) is SelfFact:
            merged[name] = value  # attributes of self are shared, not copied per branch
    return merged


class FunctionFlow:
    def __init__(self, ctx, env: dict, declared_return: TensorFact | None = None, return_node=None,
                 autocast: str | None = None) -> None:
        self.ctx = ctx
        self.env = env
        self.autocast = autocast  # the dtype of the enclosing `torch.autocast` block, if any
        self.evaluator = Evaluator(ctx, env, autocast)
        self.declared_return = declared_return
        self.return_node = return_node

    # -- helpers ------------------------------------------------------------------------------------
    def _with_env(self, env: dict, autocast: str | None = None) -> "FunctionFlow":
        return FunctionFlow(self.ctx, env, self.declared_return, self.return_node, autocast or self.autocast)

    # -- statements ----------------------------------------------------------------------------------
    def run(self, statements) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node) -> None:
        # by exact type: LibCST's node classes are ABCs, whose isinstance costs ~1 µs, and these
        # concrete ones have no subclasses
        kind = type(node)
        if kind is cst.SimpleStatementLine:
            for small in node.body:
                self.small_statement(small, node)
        elif kind is cst.If:
            self._if(node)
        elif kind is cst.For or kind is cst.While:
            self._loop(node)
        elif isinstance(node, cst.With):
            self._with(node)
        elif isinstance(node, cst.Try) or type(node).__name__ == "TryStar":
            self._try(node)
        elif isinstance(node, cst.FunctionDef):
            analyse_function(self.ctx, node, dict(self.env), autocast=self.autocast)
        elif isinstance(node, cst.ClassDef):
            analyse_class(self.ctx, node, dict(self.env), self.autocast)
        elif isinstance(node, cst.Match):
            self._match(node)
        else:
            self.evaluator.walk(node)

    def _block(self, block, env: dict, autocast: str | None = None) -> dict:
        flow = self._with_env(env, autocast)
        body = block.body if isinstance(block, cst.IndentedBlock) else [block] if block is not None else []
        if isinstance(block, cst.SimpleStatementSuite):
            for small in block.body:
                flow.small_statement(small, None)
        else:
            flow.run(body)
        return flow.env

    def _set_env(self, env: dict) -> None:
        self.env.clear()
        self.env.update(env)

    def _if(self, node: cst.If) -> None:
        self.evaluator.eval(node.test)
        then_env = self._block(node.body, dict(self.env))
        if node.orelse is None:
            else_env = dict(self.env)
        elif isinstance(node.orelse, cst.If):
            flow = self._with_env(dict(self.env))
            flow._if(node.orelse)
            else_env = flow.env
        else:
            else_env = self._block(node.orelse.body, dict(self.env))
        self._set_env(merge_envs(then_env, else_env, self.ctx.settings.sizes))

    def _loop(self, node) -> None:
        if isinstance(node, cst.For):
            iterated = self.evaluator.eval(node.iter)
            element = None
            if type(iterated) is SequenceFact and iterated.items and all(i == iterated.items[0] for i in iterated.items):
                element = iterated.items[0]
            body_env = dict(self.env)
            self._with_env(body_env).assign(node.target, element, None)
        else:
            self.evaluator.eval(node.test)
            body_env = dict(self.env)
        body_env = self._block(node.body, body_env)
        merged = merge_envs(self.env, body_env, self.ctx.settings.sizes)
        if node.orelse is not None:
            merged = self._block(node.orelse.body, merged)
        self._set_env(merged)

    def _with(self, node: cst.With) -> None:
        autocast = None
        for item in node.items:
            self.evaluator.eval(item.item)
            autocast = autocast or self._autocast_dtype(item.item)
            if item.asname is not None:
                self.assign(item.asname.name, None, None)
        self._set_env(self._block(node.body, dict(self.env), autocast))

    def _autocast_dtype(self, node):
        """`torch.autocast(..., dtype=torch.bfloat16)`: float32 matmuls inside run in that dtype."""
        if not isinstance(node, cst.Call):
            return None
        name = self.ctx.settings.imports.resolve(node.func) or ""
        if not name.endswith("autocast") or not name.startswith("torch"):
            return None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "enabled" and isinstance(arg.value, cst.Name) \
                    and arg.value.value == "False":
                return None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "dtype":
                fact = self.evaluator.eval(arg.value)
                return fact.dtype if type(fact) is DTypeFact else None
        device = next((a.value for a in node.args if a.keyword is None or a.keyword.value == "device_type"), None)
        if isinstance(device, cst.SimpleString) and "cpu" in device.value:
            return "bfloat16"
        return "float16"  # CUDA autocast's default

    def _try(self, node) -> None:
        before = dict(self.env)
        body_env = self._block(node.body, dict(self.env))
        merged = body_env
        for handler in node.handlers:
            merged = merge_envs(merged, self._block(handler.body, dict(before)), self.ctx.settings.sizes)
        if node.orelse is not None:
            merged = self._block(node.orelse.body, merged)
        if node.finalbody is not None:
            merged = self._block(node.finalbody.body, merged)
        self._set_env(merged)

    def _match(self, node: cst.Match) -> None:
        self.evaluator.eval(node.subject)
        merged = None
        for case in node.cases:
            env = self._block(case.body, dict(self.env))
            merged = env if merged is None else merge_envs(merged, env, self.ctx.settings.sizes)
        if merged is not None:
            self._set_env(merge_envs(merged, self.env, self.ctx.settings.sizes))

    # -- small statements -------------------------------------------------------------------------
    def small_statement(self, node, line) -> None:
        kind = type(node)
        if kind is cst.Assign:
            self._assign_statement(node, line)
        elif kind is cst.AnnAssign:
            self._annotated_assign(node)
        elif kind is cst.AugAssign:
            self._augmented_assign(node)
        elif kind is cst.Return:
            self._return(node)
        elif kind is cst.Expr:
            self._expression_statement(node)
        else:
            self.evaluator.walk(node)

    def _expression_statement(self, node: cst.Expr) -> None:
        value = node.value
        # self.register_buffer("mask", tensor) makes `self.mask` a tensor attribute
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value == "register_buffer" and len(value.args) >= 2:
            owner = self.evaluator.eval(value.func.value)
            name = self.evaluator.eval(value.args[0].value)
            fact = self.evaluator.eval(value.args[1].value)
            if type(owner) is SelfFact and type(name) is StringFact:
                owner.attributes[name.value] = fact
            return
        self.evaluator.eval(value)

    def _shape_comment(self, line):
        if line is None or line.trailing_whitespace.comment is None:
            return None
        comment = line.trailing_whitespace.comment
        try:
            parsed = parse_shape_comment(comment.value)
        except ShapeError as error:
            self.ctx.report(Unparseable("shape comment", error.message), comment, error.offset or 0)
            return None
        if parsed is None:
            return None
        return comment, parsed

    def _assign_statement(self, node: cst.Assign, line) -> None:
        fact = self.evaluator.eval(node.value)
        comment = self._shape_comment(line)
        for target in node.targets:
            target_node = target.target
            value = fact
            if comment is not None and isinstance(target_node, cst.Name) and len(node.targets) == 1:
                comment_node, parsed = comment
                declared = TensorFact(tuple(parsed.dims), None, COMMENT)
                value = reconcile(self.ctx, fact, declared, comment_node, "shape comment", parsed.offset)
            self.assign(target_node, value, node.value)

    def _annotated_assign(self, node: cst.AnnAssign) -> None:
        declared = single_fact(facts_from_annotation(node.annotation.annotation, self.ctx))
        fact = self.evaluator.eval(node.value) if node.value is not None else None
        if declared is not None:
            fact = reconcile(self.ctx, fact, declared, node.annotation.annotation, "annotation") if node.value is not None else declared
        if isinstance(node.target, cst.Name) and node.value is None and declared is None:
            return
        self.assign(node.target, fact, node.value)

    def _augmented_assign(self, node: cst.AugAssign) -> None:
        operator = node.operator
        if isinstance(operator, cst.MatrixMultiplyAssign):
            synthetic = cst.BinaryOperation(node.target, cst.MatrixMultiply(), node.value)
            self.ctx.stand_ins[synthetic] = node
            fact = record_matmul_operator(self.evaluator, synthetic)
        else:
            left, right = self.evaluator.eval(node.target), self.evaluator.eval(node.value)
            binary = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
                      cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide}.get(type(operator))
            fact = self.evaluator.arithmetic(binary(), left, right) if binary else None
            if type(left) is TensorFact and left.shape is not None and binary is not None \
                    and (fact is None or type(fact) is TensorFact and fact.shape is None):
                # `x += pos_emb` is `x.add_(pos_emb)`: torch updates x in place, so x keeps its shape
                # and dtype whatever the other operand is (one that does not broadcast to x raises)
                fact = left
        self.assign(node.target, fact, None)

    def _return(self, node: cst.Return) -> None:
        if node.value is None:
            return
        fact = self.evaluator.eval(node.value)
        if self.declared_return is not None and type(fact) is TensorFact:
            reconcile(self.ctx, fact, self.declared_return, self.return_node, "return annotation")

    # -- binding ------------------------------------------------------------------------------------
    def assign(self, target, fact, value_node) -> None:
        kind = type(target)
        if kind is cst.Name:
            self.env[target.value] = fact
            if type(fact) is TensorFact:
                self.ctx.bind(target.value, "assignment", target, fact)
        elif kind is cst.Tuple or kind is cst.List:
            self._unpack(target, fact, value_node)
        elif isinstance(target, cst.Attribute):
            owner = self.evaluator.eval(target.value)
            if type(owner) is SelfFact:
                owner.attributes[target.attr.value] = fact
        elif isinstance(target, cst.Subscript):
            self.evaluator.walk(target)

    def _unpack(self, target, fact, value_node) -> None:
        elements = [e.value for e in target.elements]
        if any(isinstance(e, cst.StarredElement) for e in target.elements):
            for element in elements:
                self.assign(element, None, None)
            return
        if fact is None and value_node is not None:
            fact = self._shape_from_unpacking(elements, value_node)
        if type(fact) is SequenceFact and len(fact.items) == len(elements):
            for element, item in zip(elements, fact.items):
                self.assign(element, item, None)
            return
        for element in elements:
            self.assign(element, None, None)

    def _shape_from_unpacking(self, elements, value_node):
        """`B, T, C = x.size()` on an x of unknown shape: x is [B, T, C], named by the unpacking."""
        call = value_node
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "size" \
                and not call.args:
            source = call.func.value
        elif isinstance(call, cst.Attribute) and call.attr.value == "shape":
            source = call.value
        else:
            return None
        if not isinstance(source, cst.Name) or not all(isinstance(e, cst.Name) for e in elements):
            return None
        existing = self.env.get(source.value)
        if existing is not None and (type(existing) is not TensorFact or existing.shape is not None):
            return None
        dims = tuple(Sym(e.value) for e in elements)
        dtype = existing.dtype if type(existing) is TensorFact else None
        framework = existing.framework if type(existing) is TensorFact else None
        self.env[source.value] = TensorFact(dims, dtype, framework=framework)
        return SequenceFact(tuple(DimFact(d) for d in dims))


# -- definitions: a function's parameters and body, a class's __init__ first ---------------------------

def _parameters(ctx, node: cst.FunctionDef, env: dict, self_fact) -> dict:
    params = node.params
    ordered = [*params.posonly_params, *params.params]
    for index, param in enumerate([*ordered, *params.kwonly_params]):
        name = param.name.value
        if index == 0 and self_fact is not None and param in ordered and name in ("self",):
            env[name] = self_fact
            continue
        if param.annotation is not None:
            annotation = param.annotation.annotation
            if isinstance(annotation, cst.Name) and annotation.value == "int":
                env[name] = DimFact(Sym(name))  # `n_head: int` is the dim n_head
            else:
                env[name] = single_fact(facts_from_annotation(annotation, ctx))
        else:
            env.pop(name, None)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            env.pop(star.name.value, None)
    return env


def analyse_function(ctx, node: cst.FunctionDef, env: dict, self_fact=None, autocast: str | None = None) -> None:
    flow_env = _parameters(ctx, node, env, self_fact)
    params = node.params
    for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
        if type(flow_env.get(param.name.value)) is TensorFact:
            ctx.bind(param.name.value, "parameter", param.name, flow_env[param.name.value])
    outer = Evaluator(ctx, dict(env), autocast)
    for decorator in node.decorators:
        outer.eval(decorator.decorator)
    for param in [*node.params.params, *node.params.kwonly_params, *node.params.posonly_params]:
        if param.default is not None:
            outer.eval(param.default)
    declared_return = None
    return_node = None
    if node.returns is not None:
        return_node = node.returns.annotation
        declared_return = single_fact(facts_from_annotation(return_node, ctx))
    flow = FunctionFlow(ctx, flow_env, declared_return, return_node, autocast)
    body = node.body
    if isinstance(body, cst.IndentedBlock):
        flow.run(body.body)
    else:
        for small in body.body:
            flow.small_statement(small, None)


def is_static(method: cst.FunctionDef) -> bool:
    return any(dotted_name(d.decorator) in ("staticmethod", "classmethod") for d in method.decorators)


def self_for(method: cst.FunctionDef, built_in_init: SelfFact) -> SelfFact:
    """`__init__` builds what every method sees through `self`; any other method works on its own
    copy, since methods run in any order (`set_output_embeddings` must not unmake `self.lm_head`)."""
    if method.name.value == "__init__":
        return built_in_init
    return SelfFact(dict(built_in_init.attributes))


def analyse_class(ctx, node: cst.ClassDef, env: dict, autocast: str | None = None) -> None:
    """`__init__` first: the attributes it builds (`nn.Linear`, `nn.Parameter`, dims from config)
    are what every other method sees through `self`."""
    self_fact = SelfFact({})
    methods = []
    class_env = dict(env)
    flow = FunctionFlow(ctx, class_env, autocast=autocast)
    for statement in node.body.body if isinstance(node.body, cst.IndentedBlock) else []:
        if isinstance(statement, cst.FunctionDef):
            methods.append(statement)
        else:
            flow.statement(statement)
    methods.sort(key=lambda m: m.name.value != "__init__")
    for method in methods:
        analyse_function(ctx, method, dict(class_env), None if is_static(method) else self_for(method, self_fact),
                         autocast)
