"""One whole-model run: the entry's class built with its constructor defaults, then the entry
method interpreted with the configured inputs; every call of the tree's code is analysed with the
caller's argument facts (memoised by them), and its cost summary is added under the caller's loops
and branches."""

from __future__ import annotations

from contextlib import contextmanager

import libcst as cst

from ...analysis.facts import SelfFact, TensorFact
from ...analysis.context import Recorder
from ..python import class_decorators
from . import module_order
from .decisions import decide
from .expressions import truth
from ..values.inheritance import find_method, owner_of
from .model_evaluator import ModelEvaluator
from .code_calls import CodeCalls
from .function_runs import FunctionRuns
from ..library import library_values
from ..library.module_calls import ModuleCalls
from ..library.module_paths import ModulePaths
from ..values.objects import Called, FunctionRef, Instance, SiteEntry, UnrolledPass
from ..python.known_floats import FloatValues
from ..memory.loop_indices import LoopIndices
from ..memory.memory_activations import SavedOps
from ..memory.memory_live import LiveNames
from ..memory.memory_parameters import ParameterLedger
from ..memory.saved_tensors import site_memory
from ..values.shape_loss import ShapeLoss, lost_shape
from ..memory.storage import StorageTracker
from ..values.work_budget import WorkBudget
from ..values.identity import IdentityMap, IdentitySet
from ...config.work_limits import WorkLimits
from ..python.gradient_flow import GradientFlow, flow_into


class RunRecorder(Recorder):
    def __init__(self, run) -> None:
        super().__init__()
        self.run = run

    def site(self, site) -> None:
        self.run.record(site)


class ModelRun(ModulePaths, ModuleCalls, CodeCalls, FunctionRuns):
    def __init__(self, tree_factory, sizes: dict, mode: str, assume: dict, config_values: dict | None = None,
                 limits: WorkLimits = WorkLimits()) -> None:
        self.budget = WorkBudget(limits)  # the one work budget of this run (work_budget.py)
        self.budget_cuts: set = set()  # kinds of the budget whose cut is listed
        self.config_values = config_values or {}  # the dims_from JSON: what `config.x` reads
        self.config_names: dict = {}  # the config class's attribute_map (`hidden_size` -> `n_embd`)
        self.config_defaults: dict = {}  # class-level defaults of the config class and its bases
        self.recorder = RunRecorder(self)
        self.tree = tree_factory(self.recorder)
        self.sizes = sizes
        self.unified: list = []  # dim_unification.Unified: unsized dims bound to the size they met
        self.mode = mode
        self.assume = assume
        self.grad: dict = {}  # id(fact) -> fact: tensors that need a gradient (kept alive: ids stay unique)
        self.grad_frames: list = []  # per expression being evaluated: the tensors it depends on (or None)
        self.grad_flow = GradientFlow(mode == "training")  # which tensors each one was computed from (gradient_flow)
        self.stack: list = [[]]  # entry lists being filled, innermost last
        self.memo: dict = {}
        self.active: list = []
        self.active_keys: list = []  # the memo key of each active call (code_calls: a recursion that repeats itself)
        self.instances: dict = {}  # id(SelfFact) -> Instance
        self.class_chains: dict = {}  # (id(file), class name) -> its base chain (inheritance._chain)
        self.config_copies: dict = {}  # id(SelfFact) -> a `copy.deepcopy(config)` (config_copies)
        # what the code assigned on the root config (`config._spec = ...` in a setter): its own
        # attributes beyond config.json's fields, read before them (config_objects)
        self.config_state = SelfFact({})
        self.config_setter_fields: set = set()  # config.json fields whose property setter ran at build
        self.config_code = 0  # calls of the config's own code running (code_calls._on_config)
        self.sub_configs: dict = {}  # `config.text_config` name -> the object built for it, once (library_values)
        self.sub_config_objects = IdentitySet()  # those objects
        self.decorated_tables: dict = {}  # (file, table name) -> entries its decorators add (registries)
        self.config_views: dict = {}  # id -> an object the config's code built (a view of it)
        # attribute_presence: objects whose attributes the run may not all have seen (a call not followed
        # while building, an unknown setattr name), and (object, name) set on one side of an undecided if
        self.incomplete_objects = IdentitySet()
        self.maybe_attributes = IdentitySet()  # Pair(owner, name)
        self.copy_indices = IdentityMap()  # one object standing for a list's n copies -> the index it was read at
        self.paths = IdentityMap()  # module object -> module path
        self.classes: dict = {}  # module path -> class name
        self.module = ""  # the module path whose code is running
        self.undecided: list = []
        # conditions undecided where a side returned: what the function returns depends on them (a
        # build whose object is lost names them, so `assume` can decide one)
        self.undecided_returns: list = []
        self.building = 0  # inside a constructor: its branches cost nothing we count
        self.problems: list = []  # (what, reason): calls that could not be followed (recursion)
        self.unfollowed: list = []  # (unit context, call node, reason)
        self.limits: list = []  # (path, line, column, what, reason): where a limit stopped the analysis
        self.with_parameters: dict = {}  # id(ModuleFact) -> module: norms holding weights
        self.loop_counts: list = []  # trip counts of the loops being run, outermost first (None: unknown)
        self.module_values: dict = {}  # (file, name) -> value of a module-level assignment
        self.global_values: dict = {}  # (id(file), name) -> the binding a function left (`global name`)
        self.global_frames: list = []  # the running functions' declared globals, innermost last (module_globals)
        self.global_version = 0  # bumped by each binding a function changes (memo keys)
        self.importing = 0  # computing a module's top-level value: it reads the bindings of its import
        self.lambdas: dict = {}  # cst.Lambda -> the def it stands for (lambdas.lambda_function)
        self.build_calls = 0  # followed calls below the innermost constructor
        self.build_file = None  # the file of the innermost constructor running
        self.forward_build = False  # the constructors running were called by running code, not by a build
        self.factory = False  # a classmethod factory is running inside a constructor (code_calls)
        self.no_grad = 0  # inside a `@torch.no_grad()` function: nothing computed needs a gradient
        self.autocast_modes: list = []  # the autocasts entered (execution_modes.AutocastMode), innermost last
        self.floats = FloatValues()  # the values of the Python floats the run knows
        self.floats.know(library_values.ZERO_FLOAT, 0.0)  # config.json's 0.0 compares as 0.0 (`jitter > 0`)
        self.frames: list = []  # (function node, self fact) of the functions running, innermost last
        self.method_owner: dict = {}  # id(method found through the bases) -> its ast.ClassDef
        self.class_patches: dict = {}  # (file, class) -> attributes its decorators wrote (class_decorators)
        self.storage = StorageTracker(self)  # which tensors share memory (retained bytes)
        self.shape_loss = ShapeLoss()  # where each shapeless tensor lost its shape
        self.parameters = ParameterLedger()  # what each torch module built holds (memory_parameters)
        self.saved_ops = SavedOps()  # what every other op saves for backward (memory_activations)
        self.live = LiveNames(self)  # what each running function's names hold (memory_live)
        self.loop_indices = LoopIndices()  # the passes of loops over lists built with an index
        self.returned = None  # the entry's return value, once it has run
        # events after which the run cannot tell that the code it ran raised nothing (try_paths): a
        # `raise` run, an undecided branch, a call not followed, a value not known
        self.doubts = 0
        self.memo_doubted: dict = {}  # memo key -> whether that call's run had a doubt (replayed on a hit)

    # -- gradients ---------------------------------------------------------------------------------
    def mark(self, fact, sources=None, merge: bool = False) -> None:
        """`fact` needs a gradient, computed from `sources` (gradient_flow: what the backward reaches)."""
        if self.mode == "training" and type(fact) is TensorFact and not self.no_grad \
                and fact.dtype not in _NO_GRADIENT_DTYPES:
            self.grad[id(fact)] = fact
            if sources:
                (self.grad_flow.merge if merge else self.grad_flow.derive)(fact, sources)
            flow_into(self.grad_frames, (fact,))

    @staticmethod
    def never_needs_grad(fact) -> bool:
        """An integer or bool tensor: torch gives it no gradient whatever it was computed from."""
        return type(fact) is TensorFact and fact.dtype in _NO_GRADIENT_DTYPES

    def parametrised(self, module):
        """A shape-preserving module with parameters (LayerNorm): kept, so its output needs a gradient."""
        if module is not None:
            self.with_parameters[id(module)] = module
        return module

    def has_parameters(self, module) -> bool:
        return self.with_parameters.get(id(module)) is module

    def needs_grad(self, fact) -> bool:
        return not self.no_grad and id(fact) in self.grad and self.grad[id(fact)] is fact

    # -- summaries ---------------------------------------------------------------------------------
    @property
    def entries(self) -> list:
        return self.stack[-1]

    def add(self, entry) -> None:
        self.entries.append(entry)

    def add_call(self, summary: list) -> None:
        """A callee's summary, by reference: the same summary called again right after is one more
        execution of it (`h(x) + h(x)`), never a copy of its entries."""
        if not summary:
            return
        entries = self.entries
        # past a pass marker of an unrolled loop too: the same call in the next pass is one more
        # execution (the marker only tells copies of a block apart, and these are one block)
        last = entries[-2] if len(entries) > 1 and type(entries[-1]) is UnrolledPass else entries[-1] if entries else None
        if type(last) is Called and last.entries is summary:
            last.count += 1
        else:
            entries.append(Called(summary))

    @contextmanager
    def collecting(self, entries: list):
        self.stack.append(entries)
        try:
            yield entries
        finally:
            self.stack.pop()

    def record(self, site) -> None:
        grads = tuple(self.needs_grad(op) for op in (site.arguments or site.operands))
        try:
            memory = site_memory(self.storage, site, grads, linear_weight_is_parameter=site.spec.form == "module")
            self.storage.expect_output(site, memory)
        except Exception as error:  # noqa: BLE001 - tracking memory must never cost the model its FLOPs
            self.storage.fail(error)
            memory = None
        lost = None
        if any(op is None or lost_shape(op) for op in site.operands):
            lost = self.shape_loss.for_operands(site.operands)
        entry = SiteEntry(site, self.module, grads, memory, lost)
        self.add(entry)
        self.grad_flow.expect(site.span._node if site.span is not None else None, entry)

    def loss_reason(self, node) -> str | None:
        """Why `node` gives no shape, when the run knows better than its kind of expression."""
        for _, seen, reason in self.unfollowed:
            if seen is node:
                return f"not followed: {reason}"
        return None

    def doubt(self) -> None:
        """Something ran that may have raised (try_paths: a `try` whose body had none takes no handler)."""
        self.doubts += 1

    def not_followed(self, ctx, node, reason: str) -> None:
        """A call that may run a module but is not followed: listed, since its cost is unknown."""
        self.doubts += 1
        if self.building == 0 and all(seen is not node for _, seen, _ in self.unfollowed):
            self.unfollowed.append((ctx, node, reason))

    def limit_reached(self, path, line: int, column: int, what: str, reason: str) -> None:
        """A limit (base classes, call depth, import hops, files, the work budget) stopped the
        analysis here: listed with the calls not followed, so the total is never complete by silence."""
        self.doubts += 1
        record = (str(path), line, column, what[:200], reason)
        if record not in self.limits:
            self.limits.append(record)

    def budget_cut(self, ctx, node, kind: str) -> None:
        """The first place where a part of the work budget ran out: listed with the calls not
        followed (once: everything after it is cut too)."""
        self.doubts += 1
        if kind not in self.budget_cuts:
            self.budget_cuts.add(kind)
            self.unfollowed.append((ctx, node, self.budget.reason(kind)))

    def limit_at(self, function: FunctionRef, what: str, reason: str) -> None:
        """`limit_reached` at the `def` of `function`."""
        try:
            line, column, _, _ = function.source.ctx.position(function.node)
        except (KeyError, AttributeError):
            line, column = 1, 1
        self.limit_reached(function.source.ctx.settings.path, line, column, what, reason)

    def note_undecided(self, condition: str, returns: bool = False) -> None:
        self.doubts += 1
        if self.building == 0 and condition not in self.undecided:
            self.undecided.append(condition)
        if returns and condition not in self.undecided_returns:
            self.undecided_returns.append(condition)

    @contextmanager
    def in_loop(self, count):
        self.loop_counts.append(count)
        try:
            yield
        finally:
            self.loop_counts.pop()

    def module_value(self, source, name: str, before: int | None = None):
        """`LinearNoBias = partial(nn.Linear, bias=False)` at the top of a file (or imported from
        one): its value just before line `before` of the file (None: once the file has run), with
        the module's statements taken in order (module_order.py)."""
        return module_order.value_at(self, source, name, before)

    def top_level_value(self, key, parsed, line: int | None = None):
        """A value a module computes as it is imported (a module-level assignment, a class body's),
        evaluated once at the top level of its file, at `line`, and kept under `key`; `parsed()`
        gives (the file, the value's node) or None. Building it costs nothing we count."""
        if key in self.module_values:
            return self.module_values[key]
        self.module_values[key] = None  # a definition that reads itself stays unknown
        found = parsed()
        if found is not None and found[1] is not None:
            home, value_node = found
            self.building += 1
            self.importing += 1
            try:
                with self.collecting([]):
                    evaluator = self.module_evaluator(home)
                    evaluator.top_line = line
                    self.module_values[key] = evaluator.eval(value_node)
            finally:
                self.building -= 1
                self.importing -= 1
        return self.module_values[key]

    def module_evaluator(self, source):
        """An evaluator at the top level of `source` (a class decorator, a module-level value)."""
        return ModelEvaluator(source.ctx, {}, run=self, source=source)

    # -- objects -----------------------------------------------------------------------------------
    def instance(self, self_fact) -> Instance | None:
        return self.instances.get(id(self_fact))

    def method_of(self, self_fact, name: str):
        instance = self.instance(self_fact)
        if instance is None:
            return None
        patched = class_decorators.patched_member(self, instance.source, instance.class_name, name)
        if patched is not None:
            return class_decorators.bound(patched, instance)
        found = find_method(self, instance.source, instance.cls, name)
        return None if found is None else FunctionRef(found[0], found[1], instance)

    def super_method(self, super_ref, name: str):
        """`super().name` inside the method running now: the next definition up the chain."""
        instance = self.instance(super_ref.self_fact)
        if instance is None:
            return None
        after = owner_of(self, instance, super_ref.method)
        patched = class_decorators.patched_member(self, instance.source, instance.class_name, name, after) \
            if after is not None else None
        if patched is not None:
            return class_decorators.bound(patched, instance)
        found = find_method(self, instance.source, instance.cls, name, after) if after is not None else None
        return None if found is None else FunctionRef(found[0], found[1], instance)

    # -- branches ----------------------------------------------------------------------------------
    # Python's truth protocol and a condition's decision, for the semantics below the run (builtins,
    # layer switches) that are handed the run rather than importing the evaluator above them
    def truth(self, fact) -> bool | None:
        return truth(self, fact)

    def condition(self, interp, node) -> bool | None:
        """`node`'s truth when decided (`training=self.training`), without noting an undecided
        condition on a repeated layer's index as a branch does."""
        return decide(self, interp, node)

    def decide(self, interp, node):
        decision = decide(self, interp, node)
        if decision is None:
            self.loop_indices.undecided(interp, node)  # a condition on a repeated layer's own index
        return decision


# torch lets only floating and complex tensors need a gradient: topk's indices, argmax, comparisons and
# the ids sorted from them never do, whatever they were computed from
_NO_GRADIENT_DTYPES = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"})


def _method(cls: cst.ClassDef, name: str):
    """The method as Python binds it: the last definition (`@overload` stubs come first)."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
    found = [s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == name]
    return found[-1] if found else None
