"""Torch modules and containers as the run builds and applies them: `nn.ModuleList`/`ModuleDict`/
`Sequential`/`Embedding` built from their arguments, and a linear layer, an embedding, a Sequential,
an einops layer or any module value applied to a tensor. A mixin of ModelRun (model_run.py), apart
from the calls of the tree's own code (code_calls.py), which these fall back on for a module's forward."""

from __future__ import annotations

import libcst as cst

from shape_annotations import BinOp, Const, simplify_dim

from ...analysis import calls
from ...analysis.facts import ModuleFact, SelfFact, SequenceFact, StringFact, TensorFact
from ...analysis.arguments import CallArgs
from ...analysis.given_values import Given
from ...analysis.interpreter import UNHANDLED
from ..values import library_layers, unrolled_loops
from ..python import python_values
from ..values.library_objects import MappingFact
from ..python.known_values import int_fact
from ..values.objects import Embedding, ModuleDict, ModuleList, Repeat, Sequential, SiteEntry, Visit, known_count



class ModuleCalls:
    """ModelRun's containers and torch modules: built (`build_container`) and applied (`call_linear`,
    `call_embedding`, `call_sequential`, `apply_module`)."""

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
                if covered is not None and covered.differed and trips <= unrolled_loops.MAX_UNROLLED:
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
            if args.starred:  # `nn.Sequential(stem, *blocks)`: each `*list` spliced where it stands
                return _spliced_sequential(interp, args)
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
        if module in self.paths:
            self.add(Visit(self.paths[module]))

    def call_linear(self, interp, node, module, args):
        """A linear or convolution module: its input evaluated first (its own sites stay with the
        caller), then the site recorded in the module's path; the weight is a parameter."""
        x = interp.eval(args.get(0, "input"))
        for value in [*args.positional[1:], *args.keywords.values()]:
            interp.eval(value)
        before = len(self.entries)
        outer = self.module
        self.module = self.paths.get(module, outer)
        if module in self.paths:
            self.add(Visit(self.module))
        try:
            out = calls.call_module(interp, node, module, CallArgs([Given(x)], {}, False))
        finally:
            self.module = outer
        if len(self.entries) > before and type(self.entries[-1]) is SiteEntry:
            entry = self.entries[-1]
            entry.grads = (self.needs_grad(x), self.mode == "training" and not self.no_grad)  # the weight: a parameter
            self.grad_flow.output(entry, out)
        self.storage.link_output(node, out)
        self.mark(out, [x])
        return out

    def call_embedding(self, interp, args, embedding: Embedding):
        indices = interp.eval(args.get(0, "input"))
        if type(indices) is not TensorFact or indices.shape is None or embedding.dim is None:
            return None
        if embedding in self.paths:
            self.add(Visit(self.paths[embedding]))
        out = TensorFact(tuple(indices.shape) + (embedding.dim,), None, framework="torch")
        if not self.parameters.frozen(embedding):
            self.mark(out)  # a lookup into a parameter (a frozen one gives rows that need no gradient)
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
        carried = CallArgs([Given(fact)], {}, False)  # the running value, evaluated
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
        if type(module) is ModuleFact:  # shape-preserving, or reshaping (padding, pooling)
            self.visit(module)
            if type(fact) is not TensorFact:
                return None
            out = fact.with_shape(fact.shape) if module.kind == "preserve" \
                else calls.call_module(interp, node, module, carried)
            if type(out) is not TensorFact:
                return out  # a max pooling's (values, indices)
            if self.needs_grad(fact) or self.has_parameters(module):
                self.mark(out, [fact])
            self.live.applied(module, fact, out)  # its storage and temporaries (memory_live)
            self.saved_ops.applied(self, interp, node, module, fact, out)  # what it keeps (memory_activations)
            return out
        return None


def _comprehensions(node):
    found, loop = [], node.for_in
    while loop is not None:
        found.append(loop)
        loop = loop.inner_for_in
    return found


def _spliced_sequential(interp, args: CallArgs):
    """`nn.Sequential(first, *rest)`: the modules in order, each argument evaluated once, a starred
    one spliced when its modules are listed (a list built by `append`, a display; a comprehension
    over `range(0)` is the empty list). A repeated module among others (`*[Block() for _ in
    range(n)]` after `first`) is one module standing for n built ones: which runs where is then not
    known, and the Sequential is unknown, never the repeated module taken for distinct ones."""
    items, known = [], True
    for value in args.positional:
        fact = interp.eval(value)
        if args.stars.get(id(value)) != "*":
            items.append(fact)
            continue
        listed = python_values.list_value(fact)
        if listed is None or listed.count is not None:
            known = False
        else:
            items.extend(listed.items)
    return Sequential(tuple(items)) if known else None
