"""Forward flow of facts through a function's statements.

Assignments bind facts; annotations and shape comments declare them (a contradiction with what the
code implies is a Contradiction); branches keep only what both sides agree on; loop bodies run once and
merge with the state before the loop, since they may run zero times.
"""

from __future__ import annotations

import libcst as cst

from shape_annotations import ShapeError, parse_shape_comment, same_dim, evaluate_dim

from .annotations import facts_from_annotation, single_fact
from .evaluator import Evaluator, SelfFact
from .facts import ANNOTATION, COMMENT, SequenceFact, TensorFact, merge_facts
from .problems import Contradiction, Unparseable


def merge_envs(a: dict, b: dict, sizes) -> dict:
    merged = {}
    for name in a.keys() & b.keys():
        merged[name] = a[name] if a[name] is b[name] else merge_facts(a[name], b[name], sizes)
    for name, value in list(a.items()) + list(b.items()):
        if type(value) is SelfFact:
            merged[name] = value  # attributes of self are shared, not copied per branch
    return merged


def _pick_dim(declared, inferred, sizes):
    """Keep the declared dim unless only the inferred one has a known size."""
    if evaluate_dim_safe(declared, sizes) is None and evaluate_dim_safe(inferred, sizes) is not None:
        return inferred
    return declared


def evaluate_dim_safe(dim, sizes):
    try:
        return evaluate_dim(dim, sizes)
    except ShapeError:
        return None


class FunctionFlow:
    def __init__(self, ctx, env: dict, declared_return: TensorFact | None = None, return_node=None) -> None:
        self.ctx = ctx
        self.env = env
        self.evaluator = Evaluator(ctx, env)
        self.declared_return = declared_return
        self.return_node = return_node

    # -- helpers ------------------------------------------------------------------------------------
    def _with_env(self, env: dict) -> "FunctionFlow":
        flow = FunctionFlow(self.ctx, env, self.declared_return, self.return_node)
        return flow

    def reconcile(self, inferred, declared: TensorFact, where, what: str, offset: int = 0):
        """Check a declared shape against the inferred one (reporting a Contradiction) and return the value's fact."""
        if type(inferred) is not TensorFact or inferred.shape is None:
            if type(inferred) is TensorFact and declared.dtype is None:
                return TensorFact(declared.shape, inferred.dtype, declared.origin, inferred.framework or declared.framework)
            return declared
        sizes = self.ctx.sizes
        if declared.shape is None:
            return inferred if declared.dtype is None else inferred.with_dtype(declared.dtype)
        if len(declared.shape) != len(inferred.shape) and not _has_group(declared.shape, inferred.shape):
            self.ctx.report(Contradiction(what, declared.shape, inferred.shape), where, offset)
            return declared if declared.origin == ANNOTATION else inferred
        if _has_group(declared.shape, inferred.shape):
            return declared if declared.origin == ANNOTATION else inferred
        dims = []
        for index, (d, i) in enumerate(zip(declared.shape, inferred.shape)):
            verdict = same_dim(d, i, sizes)
            if verdict is False:
                self.ctx.report(Contradiction(what, declared.shape, inferred.shape, index), where, offset)
                return declared if declared.origin == ANNOTATION else inferred
            dims.append(d if verdict else _pick_dim(d, i, sizes))
        dtype = declared.dtype or inferred.dtype
        if declared.dtype and inferred.dtype and declared.dtype != inferred.dtype and declared.origin == ANNOTATION:
            self.ctx.report(Contradiction(what, declared.shape, inferred.shape, None, declared.dtype, inferred.dtype),
                            where, offset)
        return TensorFact(tuple(dims), dtype, declared.origin, inferred.framework or declared.framework)

    # -- statements ----------------------------------------------------------------------------------
    def run(self, statements) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node) -> None:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self.small_statement(small, node)
        elif isinstance(node, cst.If):
            self._if(node)
        elif isinstance(node, (cst.For, cst.While)):
            self._loop(node)
        elif isinstance(node, cst.With):
            self._with(node)
        elif isinstance(node, cst.Try) or type(node).__name__ == "TryStar":
            self._try(node)
        elif isinstance(node, cst.FunctionDef):
            from .file_analysis import analyse_function

            analyse_function(self.ctx, node, dict(self.env))
        elif isinstance(node, cst.ClassDef):
            from .file_analysis import analyse_class

            analyse_class(self.ctx, node, dict(self.env))
        elif isinstance(node, cst.Match):
            self._match(node)
        else:
            self.evaluator.walk(node)

    def _block(self, block, env: dict) -> dict:
        flow = self._with_env(env)
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
        self._set_env(merge_envs(then_env, else_env, self.ctx.sizes))

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
        merged = merge_envs(self.env, body_env, self.ctx.sizes)
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
        previous = self.ctx.autocast
        if autocast is not None:
            self.ctx.autocast = autocast
        self._set_env(self._block(node.body, dict(self.env)))
        self.ctx.autocast = previous

    def _autocast_dtype(self, node):
        """`torch.autocast(..., dtype=torch.bfloat16)`: float32 matmuls inside run in that dtype."""
        if not isinstance(node, cst.Call):
            return None
        name = self.ctx.imports.resolve(node.func) or ""
        if not name.endswith("autocast") or not name.startswith("torch"):
            return None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "enabled" and isinstance(arg.value, cst.Name) \
                    and arg.value.value == "False":
                return None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "dtype":
                from .facts import DTypeFact

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
            merged = merge_envs(merged, self._block(handler.body, dict(before)), self.ctx.sizes)
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
            merged = env if merged is None else merge_envs(merged, env, self.ctx.sizes)
        if merged is not None:
            self._set_env(merge_envs(merged, self.env, self.ctx.sizes))

    # -- small statements -------------------------------------------------------------------------
    def small_statement(self, node, line) -> None:
        if isinstance(node, cst.Assign):
            self._assign_statement(node, line)
        elif isinstance(node, cst.AnnAssign):
            self._annotated_assign(node)
        elif isinstance(node, cst.AugAssign):
            self._augmented_assign(node)
        elif isinstance(node, cst.Return):
            self._return(node)
        elif isinstance(node, cst.Expr):
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
            from .facts import StringFact

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
                value = self.reconcile(fact, declared, comment_node, "shape comment", parsed.offset)
            self.assign(target_node, value, node.value)

    def _annotated_assign(self, node: cst.AnnAssign) -> None:
        declared = single_fact(facts_from_annotation(node.annotation.annotation, self.ctx))
        fact = self.evaluator.eval(node.value) if node.value is not None else None
        if declared is not None:
            fact = self.reconcile(fact, declared, node.annotation.annotation, "annotation") if node.value is not None else declared
        if isinstance(node.target, cst.Name) and node.value is None and declared is None:
            return
        self.assign(node.target, fact, node.value)

    def _augmented_assign(self, node: cst.AugAssign) -> None:
        operator = node.operator
        if isinstance(operator, cst.MatrixMultiplyAssign):
            from .call_sites import record_matmul_operator

            synthetic = cst.BinaryOperation(node.target, cst.MatrixMultiply(), node.value)
            self.ctx.stand_ins[synthetic] = node
            fact = record_matmul_operator(self.evaluator, synthetic)
        else:
            left, right = self.evaluator.eval(node.target), self.evaluator.eval(node.value)
            binary = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
                      cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide}.get(type(operator))
            fact = self.evaluator.arithmetic(binary(), left, right) if binary else None
        self.assign(node.target, fact, None)

    def _return(self, node: cst.Return) -> None:
        if node.value is None:
            return
        fact = self.evaluator.eval(node.value)
        if self.declared_return is not None and type(fact) is TensorFact:
            self.reconcile(fact, self.declared_return, self.return_node, "return annotation")

    # -- binding ------------------------------------------------------------------------------------
    def assign(self, target, fact, value_node) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = fact
        elif isinstance(target, (cst.Tuple, cst.List)):
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
        from shape_annotations import Sym

        from .facts import DimFact

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


def _has_group(*shapes) -> bool:
    from .shape_ops import has_group

    return any(has_group(s) for s in shapes)
