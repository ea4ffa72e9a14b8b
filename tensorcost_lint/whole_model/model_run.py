"""One whole-model run: the entry's class built with its constructor defaults, then the entry
method interpreted with the configured inputs; every call of the tree's code is analysed with the
caller's argument facts (memoised by them), and its cost summary is added under the caller's loops
and branches."""

from __future__ import annotations

from contextlib import contextmanager

import libcst as cst

from shape_annotations import BinOp, Const, Sym, simplify_dim

from ..analysis import calls
from ..analysis.facts import CONFIG_NAMES, merge_facts, DimFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, StringFact, \
    TensorFact
from ..analysis.annotations import facts_from_annotation, single_fact
from ..analysis.arguments import CallArgs
from ..analysis.context import Recorder
from ..analysis.cst_parse import parse_module
from ..analysis.function_flow import is_static
from ..analysis.interpreter import UNHANDLED
from . import call_binding, choices, class_decorators, library_layers, python_values
from .checkpointing import checkpointed_layer, run_checkpointed
from .decisions import decide
from .inheritance import find_method, owner_of, torch_base
from .library_objects import MappingFact
from .library_values import construct_record
from .model_flow import NONE, ModelEvaluator, ModelFlow
from .objects import Called, Embedding, FunctionRef, Instance, ModuleDict, ModuleList, Repeat, Sequential, SiteEntry, \
    Visit
from .known_floats import FloatValues
from .loop_indices import LoopIndices
from .known_values import int_fact
from .objects import known_count
from .optional_values import MaybeNone, join_optional
from .memory_activations import SavedOps
from .memory_live import LiveNames
from .memory_parameters import ParameterLedger
from .saved_tensors import site_memory
from .shape_loss import ShapeLoss, lost_shape
from .storage import StorageTracker
from .work_budget import WorkBudget
from ..config.work_limits import WorkLimits
from .gradient_flow import OPAQUE, GradientFlow, flow_into

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
_CARRIED = "tensorcost_sequential_input"


class RunRecorder(Recorder):
    def __init__(self, run) -> None:
        super().__init__()
        self.run = run

    def site(self, site) -> None:
        self.run.record(site)


class ModelRun:
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
        self.mode = mode
        self.assume = assume
        self.grad: dict = {}  # id(fact) -> fact: tensors that need a gradient (kept alive: ids stay unique)
        self.grad_frames: list = []  # per expression being evaluated: the tensors it depends on (or None)
        self.grad_flow = GradientFlow(mode == "training")  # which tensors each one was computed from (gradient_flow)
        self.stack: list = [[]]  # entry lists being filled, innermost last
        self.memo: dict = {}
        self.active: list = []
        self.instances: dict = {}  # id(SelfFact) -> Instance
        # attribute_presence: objects whose attributes the run may not all have seen (a call not followed
        # while building, an unknown setattr name), and (object, name) set on one side of an undecided if
        self.incomplete_objects: set = set()
        self.maybe_attributes: set = set()
        self.copy_indices: dict = {}  # id(one object standing for a list's n copies) -> the index it was read at
        self.paths: dict = {}  # id(module object) -> module path
        self.classes: dict = {}  # module path -> class name
        self.module = ""  # the module path whose code is running
        self.undecided: list = []
        self.building = 0  # inside a constructor: its branches cost nothing we count
        self.problems: list = []  # (what, reason): calls that could not be followed (recursion)
        self.unfollowed: list = []  # (unit context, call node, reason)
        self.limits: list = []  # (path, line, column, what, reason): where a limit stopped the analysis
        self.with_parameters: dict = {}  # id(ModuleFact) -> module: norms holding weights
        self.loop_counts: list = []  # trip counts of the loops being run, outermost first (None: unknown)
        self.module_values: dict = {}  # (file, name) -> value of a module-level assignment
        self.lambdas: dict = {}  # cst.Lambda -> the def it stands for (python_values.lambda_function)
        self.build_calls = 0  # followed calls below the innermost constructor
        self.build_file = None  # the file of the innermost constructor running
        self.forward_build = False  # the constructors running were called by running code, not by a build
        self.no_grad = 0  # inside a `@torch.no_grad()` function: nothing computed needs a gradient
        self.floats = FloatValues()  # the values of the Python floats the run knows
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

    # -- gradients ---------------------------------------------------------------------------------
    def mark(self, fact, sources=None, merge: bool = False) -> None:
        """`fact` needs a gradient, computed from `sources` (gradient_flow: what the backward reaches)."""
        if self.mode == "training" and type(fact) is TensorFact and not self.no_grad \
                and fact.dtype not in _NO_GRADIENT_DTYPES:
            self.grad[id(fact)] = fact
            if sources:
                (self.grad_flow.merge if merge else self.grad_flow.derive)(fact, sources)
            flow_into(self.grad_frames, (fact,))

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
        if entries and type(entries[-1]) is Called and entries[-1].entries is summary:
            entries[-1].count += 1
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

    def not_followed(self, ctx, node, reason: str) -> None:
        """A call that may run a module but is not followed: listed, since its cost is unknown."""
        if self.building == 0 and all(seen is not node for _, seen, _ in self.unfollowed):
            self.unfollowed.append((ctx, node, reason))

    def limit_reached(self, path, line: int, column: int, what: str, reason: str) -> None:
        """A limit (base classes, call depth, import hops, files, the work budget) stopped the
        analysis here: listed with the calls not followed, so the total is never complete by silence."""
        record = (str(path), line, column, what[:200], reason)
        if record not in self.limits:
            self.limits.append(record)

    def budget_cut(self, ctx, node, kind: str) -> None:
        """The first place where a part of the work budget ran out: listed with the calls not
        followed (once: everything after it is cut too)."""
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

    def note_undecided(self, condition: str) -> None:
        if self.building == 0 and condition not in self.undecided:
            self.undecided.append(condition)

    @contextmanager
    def in_loop(self, count):
        self.loop_counts.append(count)
        try:
            yield
        finally:
            self.loop_counts.pop()

    def module_value(self, source, name: str):
        """`LinearNoBias = partial(nn.Linear, bias=False)` at the top of a file (or imported from
        one): its value, read once, from that statement parsed alone."""
        key = (id(source), name)
        if key in self.module_values:
            return self.module_values[key]
        self.module_values[key] = None  # a definition that reads itself stays unknown
        found = self.tree.global_value(source, name)
        if found is not None:
            home, value = found
            value_node = _parse_assignment(home, value)
            if value_node is not None:
                evaluator = self.module_evaluator(home)
                self.building += 1
                try:
                    with self.collecting([]):
                        self.module_values[key] = evaluator.eval(value_node)
                finally:
                    self.building -= 1
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
            if id(value) in self.paths or not _is_module(value):
                continue
            self.paths[id(value)] = path
            self.classes[path] = self.classes.get(path) or _class_name(self, value)
            children = _container_children(value)
            if type(value) is SelfFact:
                instance = self.instance(value)
                contents = instance.contents if instance is not None else None
                # `class Stage(nn.Sequential)`: its layers are `stage.0`, ... as torch names them
                children = list(value.attributes.items()) + _container_children(contents)
                if type(contents) in (ModuleFact, Embedding):  # `class Proj(nn.Linear)`: the layer is the object
                    self.paths.setdefault(id(contents), path)
            for name, child in children:
                pending.append((child, ".".join(p for p in (path, str(name)) if p)))

    # -- containers and torch modules ----------------------------------------------------------------
    def build_container(self, interp, last: str, args):
        if last == "ModuleList":
            value = args.get(0, "modules")
            if value is None or isinstance(value, cst.List) and not value.elements:
                interp.eval(value)
                return python_values.GrowingList(len(self.loop_counts))  # filled by `append` below
            if isinstance(value, (cst.ListComp, cst.GeneratorExp)) and len(_comprehensions(value)) == 1:
                loop = value.for_in
                count = None
                if isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Name) \
                        and loop.iter.func.value == "range" and len(loop.iter.args) == 1:
                    count = interp.dim_of(loop.iter.args[0].value)
                if count is None:  # over a known tuple: each item built (known_iteration), or unknown
                    return python_values.list_value(interp.eval(value))
                scope = python_values.range_scope(interp, loop.target)
                index = scope.env.get(loop.target.value) if isinstance(loop.target, cst.Name) else None
                trips = known_count(count, self.sizes) if index is not None else None
                with self.loop_indices.covering(index, 0, trips or 0) as covered:
                    item = scope.eval(value.elt)
                self.loop_indices.discard(index)
                if covered is not None and covered.differed and trips <= python_values.MAX_UNROLLED:
                    # the item picks from a list by its index (`config.layer_types[i]`) whose items differ:
                    # built index by index, as Python builds it, each layer its own
                    return ModuleList(tuple(interp.with_env({**interp.env, loop.target.value: int_fact(i)})
                                            .eval(value.elt) for i in range(trips)))
                return ModuleList((item,), count, index)
            fact = interp.eval(value)
            if type(fact) is python_values.GrowingList:  # a copy: later appends to the list are not its
                return python_values.GrowingList(len(self.loop_counts), list(fact.runs), fact.unknown)
            return ModuleList(tuple(fact.items)) if type(fact) is SequenceFact else python_values.list_value(fact)
        if last == "ModuleDict":
            value = args.get(0, "modules")
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
                return ModuleDict(tuple((a.keyword.value, interp.eval(a.value)) for a in value.args
                                        if a.keyword is not None))
            if isinstance(value, cst.Dict):
                items = []
                for element in value.elements:
                    key = interp.eval(element.key) if isinstance(element, cst.DictElement) else None
                    if type(key) is not StringFact:
                        return UNHANDLED
                    items.append((key.value, interp.eval(element.value)))
                return ModuleDict(tuple(items))
            return UNHANDLED
        if last == "Sequential":
            if args.starred and len(args.positional) == 1:  # nn.Sequential(*blocks)
                listed = python_values.list_value(interp.eval(args.positional[0]))
                return None if listed is None else Sequential(listed.items, listed.count)
            if args.starred:
                for value in args.positional:
                    interp.eval(value)
                return None
            items = tuple(interp.eval(value) for value in args.positional)
            if len(items) == 1 and type(items[0]) is MappingFact:  # nn.Sequential(OrderedDict([...]))
                return Sequential(tuple(v for _, v in items[0].items), None, tuple(k for k, _ in items[0].items))
            return Sequential(items)
        if last == "Embedding":
            dim_node = args.get(1, "embedding_dim")
            interp.eval(args.get(0, "num_embeddings"))
            return Embedding(interp.dim_of(dim_node)) if dim_node is not None else UNHANDLED
        return UNHANDLED

    def visit(self, module) -> None:
        if id(module) in self.paths:
            self.add(Visit(self.paths[id(module)]))

    def call_linear(self, interp, node, module, args):
        """A linear or convolution module: its input evaluated first (its own sites stay with the
        caller), then the site recorded in the module's path; the weight is a parameter."""
        x = interp.eval(args.get(0, "input"))
        for value in [*args.positional[1:], *args.keywords.values()]:
            interp.eval(value)
        before = len(self.entries)
        outer = self.module
        self.module = self.paths.get(id(module), outer)
        if id(module) in self.paths:
            self.add(Visit(self.module))
        interp.env[_CARRIED] = x
        try:
            out = calls.call_module(interp, node, module, CallArgs([cst.Name(_CARRIED)], {}, False))
        finally:
            self.module = outer
            interp.env.pop(_CARRIED, None)
        if len(self.entries) > before and type(self.entries[-1]) is SiteEntry:
            entry = self.entries[-1]
            entry.grads = (self.needs_grad(x), self.mode == "training")  # the weight is a parameter
            self.grad_flow.output(entry, out)
        self.storage.link_output(node, out)
        self.mark(out, [x])
        return out

    def call_embedding(self, interp, args, embedding: Embedding):
        indices = interp.eval(args.get(0, "input"))
        if type(indices) is not TensorFact or indices.shape is None or embedding.dim is None:
            return None
        if id(embedding) in self.paths:
            self.add(Visit(self.paths[id(embedding)]))
        out = TensorFact(tuple(indices.shape) + (embedding.dim,), None, framework="torch")
        self.mark(out)  # a lookup into a parameter
        return out

    def call_sequential(self, interp, node, sequential: Sequential, args):
        """`self.net(x)`: each item applied in turn; an item's site is placed at the call. A repeated
        item (`nn.Sequential(*[Block() for _ in range(n)])`) runs n times, its first run apart in
        training when it makes the carried tensor need a gradient (as a loop over a ModuleList)."""
        self.visit(sequential)
        fact = interp.eval(args.get(0))
        if sequential.count is not None:
            item = sequential.items[0]
            first = Repeat(sequential.count, [])
            with self.collecting(first.entries):
                out = self.apply_module(interp, node, item, fact)
            if self.mode == "training" and self.needs_grad(out) != self.needs_grad(fact):
                first.count = Const(1)
                rest = Repeat(simplify_dim(BinOp("-", sequential.count, Const(1))), [])
                self.add(first)
                with self.collecting(rest.entries):
                    out = self.apply_module(interp, node, item, out)
                first = rest
            self.add(first)
            return out
        for module in sequential.items:
            fact = self.apply_module(interp, node, module, fact)
        return fact

    def apply_layer(self, interp, node, layer, fact):
        """An einops layer applied to `fact`."""
        self.visit(layer)
        out = library_layers.apply_einops_layer(layer, fact)
        if self.needs_grad(fact):
            self.mark(out, [fact])
        return out

    def apply_module(self, interp, node, module, fact):
        """`module(fact)` for a module value of any kind (an item of a Sequential, a side of a choice)."""
        interp.env[_CARRIED] = fact  # the running value, as a name the transfer tables can read
        carried = CallArgs([cst.Name(_CARRIED)], {}, False)
        try:
            if type(module) is ModuleFact and module.kind in ("linear", "conv"):
                return self.call_linear(interp, node, module, carried)
            if type(module) is Embedding:
                self.visit(module)
                return self.call_embedding(interp, carried, module)
            if type(module) is Sequential:
                return self.call_sequential(interp, node, module, carried)
            if type(module) is library_layers.EinopsLayer:
                return self.apply_layer(interp, node, module, fact)
            if type(module) is SelfFact and self.instance(module) is not None:
                forward = self.method_of(module, "forward")
                if forward is not None:
                    return self._invoke(forward, [fact], {}, node)
                contents = self.instance(module).contents
                if contents is None or type(contents) is SelfFact:
                    return None
                self.visit(module)  # a subclass of a torch module with no forward: torch's runs
                return self.apply_module(interp, node, contents, fact)
            if type(module) is ModuleFact and module.kind == "preserve":
                self.visit(module)
                if type(fact) is not TensorFact:
                    return None
                out = fact.with_shape(fact.shape)
                if self.needs_grad(fact) or self.has_parameters(module):
                    self.mark(out, [fact])
                self.live.applied(module, fact, out)  # its storage and temporaries (memory_live)
                return out
            return None
        finally:
            interp.env.pop(_CARRIED, None)

    # -- calls -------------------------------------------------------------------------------------
    def _evaluate_args(self, interp, args):
        return call_binding.evaluate_arguments(interp, args)

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
        positional, keywords = call_binding.evaluate_arguments(interp, args, unknown_with_grad)
        if checkpointed_layer(self, self_fact):
            return run_checkpointed(self, forward, positional, keywords, node)
        return self._invoke(forward, positional, keywords, node, frozenset(unknown_with_grad))

    def call_function(self, interp, node, function: FunctionRef, args):
        unknown_with_grad: set = set()
        positional, keywords = call_binding.evaluate_arguments(interp, args, unknown_with_grad)
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
        if find_method(self, class_ref.source, class_ref.node, "__init__") is None:
            base = torch_base(self, class_ref.source, class_ref.node)
            if base is not None:  # `class Proj(nn.Linear): ...` with no __init__: torch's builds it
                self_fact = self.build(class_ref.source, class_ref.node, [], {}, read_missing_as_dims=False)
                self.instance(self_fact).contents = interp.torch_layer(base, args)
                return self_fact
        positional, keywords = self._evaluate_args(interp, args)
        record = construct_record(self, interp, class_ref, positional, keywords)
        if record is not None:
            return record
        return self.build(class_ref.source, class_ref.node, positional, keywords, read_missing_as_dims=False)

    def build(self, source, cls, positional, keywords, *, read_missing_as_dims: bool):
        self_fact = SelfFact({})
        instance = Instance(source, cls, self_fact)
        self.instances[id(self_fact)] = instance
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
            forward_build = self.forward_build
            if self.building == 0:
                self.forward_build = bool(self.frames)  # called by running code: MAX_FORWARD_BUILD_CALL_DEPTH
            self.building += 1
            calls, self.build_calls = self.build_calls, 0
            built_file, self.build_file = self.build_file, source
            limits = len(self.limits)
            try:
                with self.collecting([]):  # building costs nothing we count
                    self._run_function(init_source, init, self_fact, positional, keywords, read_missing_as_dims,
                                       closure)
            finally:
                self.building -= 1
                self.build_calls = calls
                self.build_file = built_file
                self.forward_build = forward_build
            if len(self.limits) != limits:  # a limit cut the build short: hasattr cannot tell what is missing
                self.incomplete_objects.add(id(self_fact))
            for name, value in list(self_fact.attributes.items()):
                if type(value) is python_values.GrowingList:  # built: its appends are done
                    self_fact.attributes[name] = value.as_module_list()
        return self_fact

    def _invoke(self, function: FunctionRef, positional, keywords, node, unknown_with_grad=frozenset()):
        """`unknown_with_grad`: positions (index or keyword) of unknown arguments computed from a
        tensor that needs a gradient (call_binding.evaluate_arguments)."""
        bound = function.bound.self_fact if function.bound is not None else None
        key = (id(function.node), id(bound), self.module,
               tuple((_key(f), self.needs_grad(f)) for f in positional),
               tuple((k, _key(f), self.needs_grad(f)) for k, f in sorted(keywords.items(), key=lambda i: i[0])),
               tuple(sorted(map(str, unknown_with_grad))))
        cached = self.memo.get(key) if function.closure is None else None  # a closure reads names that change
        if cached is not None:
            result, entries = cached
            self.add_call(entries)
            return result
        # recursion is the same function on the same object under the same closure: `self.child(x)` in a
        # tree of modules runs the same forward on another object, `and_masks(and_masks(a, b), c)` one
        # `and_mask` inside another; both bounded by MAX_CALL_DEPTH
        running = (id(function.node), id(bound), id(function.closure) if function.closure is not None else None)
        if running in self.active:
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
        limit = MAX_FORWARD_BUILD_CALL_DEPTH if self.forward_build else \
            MAX_BUILD_HELPER_DEPTH if helper else MAX_BUILD_CALL_DEPTH
        # a function defined inside the one running (a closure) is that function's own code, not a
        # call one level further into a library: it is followed, and the calls it makes count as
        # the enclosing function's
        nested = 1 if self.building and function.closure is None else 0
        if nested and self.build_calls >= limit:
            return None  # bounded work: a constructor's methods are followed two calls deep, functions four
        module = self.module
        entries: list = []
        if bound is not None and id(bound) in self.paths and function.node.name.value == "forward" \
                and _own_forward(self, bound, function):
            self.module = self.paths[id(bound)]
            entries.append(Visit(self.module))
        self.active.append(running)
        self.build_calls += nested
        try:
            with self.collecting(entries):
                result = self._run_function(function.source, function.node, bound, positional, keywords, False,
                                            function.closure, unknown_with_grad)
        finally:
            self.active.pop()
            self.build_calls -= nested
            self.module = module
        if function.closure is None:
            self.memo[key] = (result, entries)
        self.add_call(entries)
        return result

    def _run_function(self, source, node: cst.FunctionDef, self_fact, positional, keywords, read_missing_as_dims,
                      closure=None, unknown_with_grad=frozenset()):
        env = self._bind(source, node, self_fact, positional, keywords, read_missing_as_dims, unknown_with_grad)
        if closure is not None:
            env = {**closure, **env}  # the enclosing function's names, its own parameters over them
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
            self_fact = None  # a @staticmethod read through `self` binds nothing to its first parameter
        if self_fact is not None and ordered:
            env[ordered[0].name.value] = self_fact
            ordered = ordered[1:]
        defaults = ModelEvaluator(source.ctx, {}, run=self, source=source)
        extra = list(positional[len(ordered):])
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
            env[params.star_arg.name.value] = SequenceFact(tuple(extra))
        call_binding.bind_extra_keywords(env, params, keywords)
        return env

    # -- branches ----------------------------------------------------------------------------------
    def decide(self, interp, node):
        decision = decide(self, interp, node)
        if decision is None:
            self.loop_indices.undecided(interp, node)  # a condition on a repeated layer's own index
        return decision


# torch lets only floating and complex tensors need a gradient: topk's indices, argmax, comparisons and
# the ids sorted from them never do, whatever they were computed from
_NO_GRADIENT_DTYPES = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"})

_NO_GRAD = ("torch.no_grad", "torch.inference_mode", "torch.autograd.grad_mode.no_grad")


def disables_grad(ctx, node: cst.FunctionDef) -> int:
    """1 for a function decorated `@torch.no_grad()` / `@torch.inference_mode()`: FlopCounterMode
    sees no backward of what runs inside."""
    for decorator in node.decorators:
        target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        if ctx.settings.imports.resolve(target) in _NO_GRAD:
            return 1
    return 0


def _own_forward(run, bound, function) -> bool:
    """The module's own forward starts a visit; `super().forward(x)` inside it does not."""
    own = run.method_of(bound, "forward")
    return own is None or own.node is function.node


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


def _parse_assignment(home, value):
    """The LibCST node of a top-level assignment's value (an `ast` node of `home`), parsed from its
    own lines; its positions join the file's context."""
    lines = home.definitions.lines
    try:
        module = parse_module("".join(lines[value.lineno - 1:value.end_lineno]))
    except (cst.ParserSyntaxError, RecursionError):
        return None
    statement = module.body[0] if module.body else None
    if not isinstance(statement, cst.SimpleStatementLine) or not statement.body:
        return None
    small = statement.body[0]
    if not isinstance(small, (cst.Assign, cst.AnnAssign)) or small.value is None:
        return None
    home.ctx.add_piece(module, value.lineno - 1)
    return small.value


def _class_name(run, value) -> str:
    if type(value) is SelfFact:
        instance = run.instance(value)
        return instance.class_name if instance is not None else "Module"
    if type(value) is ModuleFact:
        return value.spec.label.rsplit(".", 1)[-1] if value.spec is not None and value.spec.label else \
            ("Linear" if value.kind == "linear" else "(shape-preserving)")
    return type(value).__name__


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


def _method(cls: cst.ClassDef, name: str):
    """The method as Python binds it: the last definition (`@overload` stubs come first)."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
    found = [s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == name]
    return found[-1] if found else None


def _comprehensions(node):
    found, loop = [], node.for_in
    while loop is not None:
        found.append(loop)
        loop = loop.inner_for_in
    return found


class _Same:
    """A tensor argument in a memo key, by identity: `repeat_kv(k)` and `repeat_kv(v)` with equal
    shapes are two calls making two tensors (two storages), not one."""

    __slots__ = ("fact",)

    def __init__(self, fact) -> None:
        self.fact = fact  # held, so its id is not reused while the memo lives

    def __eq__(self, other) -> bool:
        return type(other) is _Same and other.fact is self.fact

    def __hash__(self) -> int:
        return id(self.fact)


def _first_parameter(function: cst.FunctionDef) -> str | None:
    params = (*function.params.posonly_params, *function.params.params)
    return params[0].name.value if params else None


def _key(value):
    if type(value) is TensorFact:
        return _Same(value)
    if type(value) is MaybeNone:
        return ("optional", _key(value.value))
    try:
        hash(value)
        return value
    except TypeError:
        return ("id", tuple(id(v) for v in value)) if isinstance(value, (tuple, list)) else ("id", id(value))
