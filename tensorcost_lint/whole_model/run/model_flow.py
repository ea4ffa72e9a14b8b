"""The per-file flow, extended for a whole-model run: statements run under the work budget, decided
branches (an undecided `if` costed as a Choice of both sides, a side that raises dropped), functions
defined inside the one running, and return values. Assignments are in flow_assignments.py, loops in
flow_loops.py, expressions in model_evaluator.py."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import SelfFact, merge_facts
from ...analysis.function_flow import merge_envs
from . import choices, module_globals, try_paths
from ..values import execution_modes
from ..python import container_changes
from ..values import optional_values
from ..values.identity import Pair
from .flow_assignments import FlowAssignments
from .flow_loops import FlowLoops
from .flow_merges import merge_sides
from .model_evaluator import GRAD_TAINT, ModelEvaluator
from ..values.objects import NONE, Choice, FunctionRef

_MAY_RAISE = frozenset({cst.Raise, cst.Import, cst.ImportFrom, cst.Assert, cst.Del})


class FlowState:
    def __init__(self) -> None:
        self.returns: list = []
        self.returned = False
        self.raised = False  # ended by `raise`: a path that yields no result


class ModelFlow(FlowLoops, FlowAssignments):
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
            # what each expression node evaluated to is read by its parent's observers and by the
            # settling after it, for the same statement: kept for the statement alone (a
            # 100,000-statement forward held them all); a call inside it runs its statements with their own
            storage = self.run_.storage
            outer, storage.seen = storage.seen, {}
            try:
                self.statement(statement)
                # what each name holds now (memory_live: a shape comment restates the value the
                # statement bound); a block's first statement reads every name, which its header may have bound
                self.run_.live.settle(self.env, statement, position == 0)
            finally:
                storage.seen = outer
            if self.continuation is not None:
                # `if cond: return a` undecided: what follows runs only on the side that did not
                # return, so its entries are that side's, not added to both (the Choice's max)
                continuation, self.continuation = self.continuation, None
                with self.run_.collecting(continuation):
                    self.run(statements[position + 1:])
                return

    def statement(self, node) -> None:
        kind = type(node)  # exact types: LibCST's classes are ABCs (a slow isinstance), these have no subclasses
        if kind is cst.FunctionDef:
            self.env[node.name.value] = FunctionRef(self.source, node, closure=self.env)
        elif kind is cst.ClassDef:
            self.env.pop(node.name.value, None)
        else:
            super().statement(node)

    def small_statement(self, node, line) -> None:
        kind = type(node)
        if kind is cst.Del:
            for element in node.target.elements if type(node.target) is cst.Tuple else [node.target]:
                container_changes.forget_deleted(self.evaluator, getattr(element, "value", element))
        if kind in _MAY_RAISE:
            self.run_.doubt()  # each may raise (an import may fail, an assert or a `del` too)
        if kind is cst.Raise:
            self.evaluator.walk(node)
            self.state.returned = self.state.raised = True
            return
        super().small_statement(node, line)

    def _with(self, node: cst.With) -> None:
        """`with` on an object of the tree's code runs its `__enter__` (what `as` binds) before the
        block and its `__exit__(None, None, None)` after it, innermost first, as Python does: a
        context manager that sets a module switch for its block (module_globals) restores it. They
        run as a constructor's code runs (bookkeeping, nothing costed, a call not followed not
        listed), as before the run ran them at all."""
        autocast, exits, modes = None, [], []
        for item in node.items:
            value = self.evaluator.eval(item.item)
            if execution_modes.is_mode(value):
                modes.append((item.item, value))
            autocast = autocast or self._autocast_dtype(item.item)
            enter = self.run_.method_of(value, "__enter__")
            entered = self._context_call(enter, [], item.item) if enter is not None else None
            exit_ = self.run_.method_of(value, "__exit__")
            if exit_ is not None:
                exits.append((exit_, item.item))
            if item.asname is not None:
                self.assign(item.asname.name, entered, None)
        with execution_modes.entered(self.run_, self.ctx, modes):
            self._set_env(self._block(node.body, dict(self.env), autocast))
        for exit_, item in reversed(exits):
            self._context_call(exit_, [NONE, NONE, NONE], item)

    def _context_call(self, method, positional, node):
        self.run_.building += 1
        try:
            return self.run_._invoke(method, positional, {}, node)
        finally:
            self.run_.building -= 1

    def _return(self, node: cst.Return) -> None:
        fact = self.evaluator.eval(node.value) if node.value is not None else NONE
        module_globals.record_exit(self.run_, self.env)
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

    def _try(self, node) -> None:
        """`try` / `except` / `else` / `finally` as paths: the body then its `else` (the path that
        raised nothing), and each handler from the state before the body (what the body raises is
        not known); a path that returns or raises ends there, the others join. A handler's `return`
        does not end the body's path: `try: probe() except: return False else: return True` may
        return either. A body that certainly raises runs its catching handler alone, one that
        certainly raises nothing runs no handler (try_paths)."""
        before = dict(self.env)
        exception = try_paths.certain_exception(self.evaluator, node.body)
        handler = try_paths.catching_handler(self.evaluator, node.handlers, exception) if exception else None
        if handler is not None and handler is not try_paths.UNKNOWN:
            env, returned = self._side(handler.body, before)
            self._set_env(env)
            if node.finalbody is not None:
                self._set_env(self._block(node.finalbody.body, dict(self.env)))
            self.state.returned = self.state.returned or returned
            return
        owner = self.env.get("self")
        # `self.x = ...` in the body and in a handler: each path starts from what was before, and
        # what the paths that go on leave is joined (never the last handler's value by fiat)
        owners = [o for o in (owner, self.run_.config_state) if type(o) is SelfFact]
        before_attributes = [dict(o.attributes) for o in owners]
        doubts = self.run_.doubts
        env, returned = self._side(node.body, dict(self.env))
        raised_nothing = self.run_.doubts == doubts
        if node.orelse is not None and not returned:
            env, returned = self._side(node.orelse.body, env)
        open_paths = [] if returned else [(env, [dict(o.attributes) for o in owners])]
        all_returned = returned
        for handler in () if raised_nothing else node.handlers:
            for o, attributes in zip(owners, before_attributes):
                o.attributes.clear()
                o.attributes.update(attributes)
            handler_env, handler_returned = self._side(handler.body, dict(before))
            all_returned = all_returned and handler_returned
            if not handler_returned:
                open_paths.append((handler_env, [dict(o.attributes) for o in owners]))
        merged, kept = open_paths[0] if open_paths else (env, [dict(o.attributes) for o in owners])
        for o, attributes in zip(owners, kept):
            o.attributes.clear()
            o.attributes.update(attributes)
        raising = f"whether `{' '.join(self.ctx.code(node.body.body[0]).split())}` raises" \
            if isinstance(node.body, cst.IndentedBlock) and node.body.body else "whether the try raises"
        for other, attributes in open_paths[1:]:
            merged = merge_envs(merged, other, self.ctx.settings.sizes)
            for o, path_attributes in zip(owners, attributes):
                _merge_attributes(self.run_, o, path_attributes, raising)
        self._set_env(merged)
        if node.finalbody is not None:
            self._set_env(self._block(node.finalbody.body, dict(self.env)))
        self.state.returned = self.state.returned or all_returned

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
            # `self.x = ...` or `config.x = ...` on each side: each side starts from what was before
            owners = [o for o in (owner, self.run_.config_state) if type(o) is SelfFact]
            before = [dict(o.attributes) for o in owners]
            globals_before = dict(self.run_.global_values)  # module globals a called function rebinds
            with self.run_.collecting(then_entries):
                then_env, then_returned = self._side(node.body, {**self.env, **on_true})
            then_raised = self.side_raised
            then_attributes = [dict(o.attributes) for o in owners]
            then_globals = dict(self.run_.global_values)
            for o, attributes in zip(owners, before):
                o.attributes.clear()
                o.attributes.update(attributes)
            module_globals.restore(self.run_, globals_before)
            with self.run_.collecting(else_entries):
                else_env, else_returned = self._else_side(node, {**self.env, **on_false})
            if then_raised == self.side_raised:  # both sides run on: what they leave is joined
                module_globals.join_sides(self.run_, globals_before, then_globals, dict(self.run_.global_values))
            elif self.side_raised:  # the else side raised: the then side's bindings stand
                module_globals.restore(self.run_, then_globals)
            for o, attributes in zip(owners, then_attributes):
                if then_raised and not self.side_raised:
                    continue  # the side that raised left nothing: the object is as the other side left it
                if self.side_raised and not then_raised:
                    o.attributes.clear()
                    o.attributes.update(attributes)
                    continue
                _merge_attributes(self.run_, o, attributes, " ".join(self.ctx.code(node.test).split()))
            if then_raised != self.side_raised:
                # one side raises: a run that yields a result takes the other (`if x is None: raise`)
                self.run_.entries.extend(else_entries if then_raised else then_entries)
                env, returned = (else_env, else_returned) if then_raised else (then_env, then_returned)
                self._set_env(env)
                self.state.returned = self.state.returned or returned
                return
            self.run_.add(Choice(self.ctx.code(node.test), (then_entries, else_entries)))
            self.run_.note_undecided(self.ctx.code(node.test), then_returned or else_returned)
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


def _merge_attributes(run, owner: SelfFact, then_attributes: dict, condition: str) -> None:
    """`self.mlp = SparseMoe(c) if ... else MLP(c)` written as an undecided `if`: an attribute the two
    sides set to different modules holds a ModuleChoice of both (each costed where it is called),
    other differing values what both agree on — never the last side's value by fiat."""
    else_attributes = owner.attributes
    for name in then_attributes.keys() ^ else_attributes.keys():
        run.maybe_attributes.add(Pair((owner, name)))  # set on one side only: hasattr cannot tell
    for name, value in then_attributes.items():
        other = else_attributes.get(name, value)
        if other is value:
            else_attributes[name] = value
            continue
        picked = choices.module_choice([value, other], condition)
        if picked is None:
            picked = merge_facts(value, other, run.sizes) or optional_values.join_optional(value, other)
        else_attributes[name] = picked
