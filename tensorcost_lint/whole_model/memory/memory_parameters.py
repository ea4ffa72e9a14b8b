"""The parameters a built model holds, read from the modules its constructors build (Contract 9).

torch's `model.parameters()` is what MemTracker counts as parameters: every `nn.Parameter` of every
submodule, one count per tensor (a tied weight, `self.tokens.weight = self.head.weight`, is one
tensor). The run records, at each torch module constructor, the parameters torch documents for
it (`nn.Linear`: weight [out, in] and bias [out] unless `bias=False`; `nn.Embedding`: weight
[num, dim]; norms: weight, and bias where the class has one, unless the affine switch is off), and
the walk below adds the `nn.Parameter` attributes of the tree's own classes. A module whose
parameters cannot be read (a size or switch undecided, a class not in the table) makes the count
partial, with its reason: never a guess.
"""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass, field

import libcst as cst

from shape_annotations import BinOp, Const, Polynomial, simplify_dim

from ...analysis import module_shapes, multihead_attention
from ...analysis.facts import ModuleFact, SelfFact, TensorFact
from ..python import python_values
from ..library import norm_buffers, parameter_containers
from ..values.objects import NONE, Embedding, ModuleDict, ModuleList, Sequential
from .dropout_memory import dropout_probability

# the parameters of torch.nn classes: (size argument position, name), the affine switch and
# whether the class has a bias that `bias=False` switches off
_NORMS = {
    "LayerNorm": ((0, "normalized_shape"), (2, "elementwise_affine"), (3, "bias")),
    "RMSNorm": ((0, "normalized_shape"), (2, "elementwise_affine"), None),
    "GroupNorm": ((1, "num_channels"), (3, "affine"), None),  # weight and bias, both under `affine`
    "BatchNorm1d": ((0, "num_features"), (3, "affine"), None),
    "BatchNorm2d": ((0, "num_features"), (3, "affine"), None),
    "BatchNorm3d": ((0, "num_features"), (3, "affine"), None),
}
_BIAS_UNDER_AFFINE = frozenset({"GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d"})
# torch.nn classes that hold no parameter
_WITHOUT_PARAMETERS = frozenset({
    "Dropout", "Dropout1d", "Dropout2d", "AlphaDropout", "InstanceNorm1d", "GELU", "ReLU", "SiLU", "Tanh",
    "Sigmoid", "Softmax", "LogSoftmax", "Identity", "Mish", "LeakyReLU", "ELU", "Hardswish", "SELU", "Softplus",
    "ModuleList", "ModuleDict", "Sequential",
    # transformers' activation modules (activations.py), built by its ACT2FN registry
    "NewGELUActivation", "GELUActivation", "QuickGELU", "Swish", "HookPoint",
})


@dataclass(frozen=True)
class ParameterTensor:
    name: str  # the attribute name (`weight`, `bias`)
    shape: tuple  # DimExprs
    dtype: str | None  # None: the config's default dtype
    trainable: bool = True  # False: requires_grad=False (`nn.Embedding(..., _freeze=True)`): no .grad, no state


@dataclass
class ParameterLedger:
    """What each torch module object built in the run holds, by the object's identity (the object is
    kept alive with its entry, so an id is never reused)."""

    held: dict = field(default_factory=dict)  # id(module) -> (module, (ParameterTensor, ...) or reason str)
    classes: dict = field(default_factory=dict)  # id(module) -> its torch.nn class name
    dropout_p: dict = field(default_factory=dict)  # id(nn.Dropout) -> its p, when known
    frozen_facts: set = field(default_factory=set)  # ids of parameter facts with requires_grad=False
    norm_rank: dict = field(default_factory=dict)  # id(norm module) -> how many trailing dims it normalises
    ties: dict = field(default_factory=dict)  # (id(module), name) -> (id(module), name) it shares
    facts: dict = field(default_factory=dict)  # (id(module), name) -> the tensor `module.name` reads
    batch_norms: dict = field(default_factory=dict)  # id(nn.BatchNorm*) -> what its constructor set (norm_buffers)
    unread: list = field(default_factory=list)  # why a parameter container built in the run is not known

    def tensor(self, run, module, name: str):
        """`module.weight` / `module.bias` of a torch module built in the run: the parameter its class
        holds, one fact per tensor (a parameter: it needs a gradient); NONE where the class holds
        none of that name (`nn.Linear(..., bias=False).bias` is None); None when not known."""
        key = self.ties.get((id(module), name), (id(module), name))
        fact = self.facts.get(key)
        if fact is None:
            entry = self.held.get(key[0])
            if entry is None or isinstance(entry[1], str):
                return None
            found = [tensor for tensor in entry[1] if tensor.name == name]
            if not found:
                return NONE if name in ("weight", "bias") else None
            fact = TensorFact(found[0].shape, found[0].dtype, framework="torch")
            run.storage.mark_parameter(fact)
            self.facts[key] = fact
            if not found[0].trainable:
                self.frozen_facts.add(id(fact))
        if id(fact) not in self.frozen_facts:
            run.mark(fact)  # each read: a first read under no_grad leaves later ones needing a gradient
        return fact

    def frozen(self, module) -> bool:
        """Whether every parameter the torch module holds is frozen (`nn.Embedding(..., _freeze=True)`):
        what it computes from them needs no gradient."""
        entry = self.held.get(id(module))
        return entry is not None and not isinstance(entry[1], str) and bool(entry[1]) \
            and not any(tensor.trainable for tensor in entry[1])

    def recast(self, old, new, cast) -> None:
        """`new` is `old` after `Module.to(dtype)` (module_casts): the same parameters, each with
        the dtype `cast(dtype)` gives it."""
        entry = self.held.get(id(old))
        if entry is not None:
            held = entry[1] if isinstance(entry[1], str) else tuple(
                dataclasses.replace(tensor, dtype=cast(tensor.dtype)) for tensor in entry[1])
            self.held[id(new)] = (new, held)
        for table in (self.classes, self.dropout_p, self.norm_rank):
            if id(old) in table:
                table[id(new)] = table[id(old)]
        for (owner, name), target in list(self.ties.items()):
            if owner == id(old):
                self.ties[(id(new), name)] = target

    def constructed(self, run, interp, last: str, args, module):
        """`module` was built by `torch.nn.<last>(args)`: record its parameters (returned unchanged)."""
        if module is None or isinstance(module, str):
            return module
        try:
            held = _torch_parameters(run, interp, last, args, module)
        except Exception as error:  # noqa: BLE001 - counting memory never costs the model its FLOPs
            held = f"the parameters of nn.{last} could not be read ({type(error).__name__})"
        self.held[id(module)] = (module, held)
        self.classes[id(module)] = last
        norm_buffers.record(run, interp, last, args, module)
        if last in _NORMS and args is not None:  # what a norm normalises over, with or without affine
            try:
                size = _size(interp, args.get(*_NORMS[last][0]))
            except Exception:  # noqa: BLE001 - unknown stays unknown
                size = None
            if size is not None:
                self.norm_rank[id(module)] = len(size)
        if "Dropout" in last and args is not None:
            p_node = args.get(0, "p")  # torch's default p is 0.5
            p = 0.5 if p_node is None else dropout_probability(run, interp, p_node)  # torch's default p
            if p is not None:
                self.dropout_p[id(module)] = p
        return module

    def tie(self, interp, target, value_node) -> None:
        """`a.weight = b.weight`: the two modules share one parameter tensor."""
        if not (isinstance(target, cst.Attribute) and isinstance(value_node, cst.Attribute)):
            return
        name = target.attr.value
        if value_node.attr.value != name or name not in ("weight", "bias"):
            return
        left, right = interp.eval(target.value), interp.eval(value_node.value)
        if id(left) in self.held and id(right) in self.held and left is not right:
            self.ties[(id(left), name)] = (id(right), name)


def _switch(run, interp, args, position, keyword) -> bool | None:
    node = args.get(position, keyword)
    return True if node is None else run.condition(interp, node)


def _size(interp, node):
    """A size argument: one dim, or a tuple/list of dims (`normalized_shape`)."""
    if isinstance(node, (cst.Tuple, cst.List)):
        dims = tuple(interp.dim_of(element.value) for element in node.elements)
        return None if None in dims else dims
    dim = interp.dim_of(node)
    return None if dim is None else (dim,)


def _torch_parameters(run, interp, last, args, module):
    dtype = module.dtype if type(module) is ModuleFact else None
    if type(module) is ModuleFact and module.kind == "linear":
        if module.in_dim is None:
            return "nn.LazyLinear: its in_features are read from the first input"
        bias = _switch(run, interp, args, 2, "bias")
        if bias is None:
            return "nn.Linear: whether it has a bias is undecided"
        weight = ParameterTensor("weight", (module.out_dim, module.in_dim), dtype)
        return (weight, ParameterTensor("bias", (module.out_dim,), dtype)) if bias else (weight,)
    if type(module) is ModuleFact and module.kind == "conv":
        options = module.options
        bias = _switch(run, interp, args, 7, "bias")
        if options is None or options.kernel is None or options.groups is None or None in (module.in_dim,
                                                                                           module.out_dim, bias):
            return f"nn.{last}: its channels, kernel, groups or bias switch are not known"
        # torch's weight: [out_channels, in_channels // groups, *kernel_size]; bias: [out_channels]
        per_group = simplify_dim(BinOp("//", module.in_dim, options.groups))
        weight = ParameterTensor("weight", (module.out_dim, per_group, *options.kernel), dtype)
        return (weight, ParameterTensor("bias", (module.out_dim,), dtype)) if bias else (weight,)
    if type(module) is ModuleFact and module.kind == multihead_attention.KIND:
        held = multihead_attention.parameters(module)
        return held if isinstance(held, str) else tuple(ParameterTensor(n, shape, dtype) for n, shape in held)
    if type(module) is Embedding:
        count = interp.dim_of(args.get(0, "num_embeddings"))
        if count is None or module.dim is None:
            return "nn.Embedding: its size is not known"
        frozen = _switch(run, interp, args, 8, "_freeze") if args.get(8, "_freeze") is not None else False
        if frozen is None:
            return "nn.Embedding: whether it is frozen (_freeze) is undecided"
        return (ParameterTensor("weight", (count, module.dim), None, trainable=not frozen),)
    if last in _NORMS:
        (size_at, size_name), (affine_at, affine_name), bias_switch = _NORMS[last]
        size = _size(interp, args.get(size_at, size_name))
        affine = _switch(run, interp, args, affine_at, affine_name)
        bias = True if last in _BIAS_UNDER_AFFINE else (
            False if bias_switch is None else _switch(run, interp, args, *bias_switch))
        if size is None or affine is None or bias is None:
            return f"nn.{last}: its size or affine switch is not known"
        if not affine:
            return ()
        weight = ParameterTensor("weight", size, dtype)
        return (weight, ParameterTensor("bias", size, dtype)) if bias else (weight,)
    if last == "PReLU":
        count = args.get(0, "num_parameters")
        size = (Const(1),) if count is None else _size(interp, count)
        return "nn.PReLU: its size is not known" if size is None else (ParameterTensor("weight", size, dtype),)
    if last in _WITHOUT_PARAMETERS or type(module) is ModuleFact and module.kind in module_shapes.RESHAPING_KINDS:
        return ()
    return f"the parameters of nn.{last} are not in tensorcost's table"


@dataclass
class ParameterCount:
    """The model's parameters: (multiplicity, ParameterTensor) per distinct tensor, and why any
    part could not be counted (empty when the count is complete)."""

    tensors: list = field(default_factory=list)
    reasons: list = field(default_factory=list)
    paths: list = field(default_factory=list)  # the module path of each tensor, in `tensors`' order
    # per tensor: the ids of the objects whose use in the forward means it is used (parameter_gradients):
    # its holder, with the containers it was reached through; a tensor tied to it adds the chains of its holders
    holders: list = field(default_factory=list)
    tied: dict = field(default_factory=dict)  # (id(holder), name) of a tensor -> chains of the tensors tied to it


def count_parameters(run, root) -> ParameterCount:
    """Every parameter under the entry's module object, with how many copies the module tree
    builds of it (`nn.ModuleList([Block() for _ in range(n)])` builds n)."""
    ledger: ParameterLedger = run.parameters
    result = ParameterCount()
    tie_reason = _declared_ties(run, root)
    if tie_reason is not None:
        result.reasons.append(tie_reason)
    result.reasons.extend(ledger.unread)
    seen: dict = {}  # id(module object) -> the path it was first met at
    pending = [(root, Polynomial.const(1), "", ())]
    while pending:
        value, copies, path, through = pending.pop(0)
        chain = (*through, id(value))
        if type(value) is python_values.ModuleChoice:
            result.reasons.append(f"{path or '(root)'}: the module class is undecided")
            continue
        if id(value) in seen:
            # one object at two paths: torch shares such a module (its parameters count once), but the
            # run may also have built one object for modules a loop builds anew each time; which it is
            # cannot be told here, so the count is not claimed
            if _holds_parameters(value):
                result.reasons.append(f"{path}: the same module object as at {seen[id(value)] or '(root)'} (a shared "
                                      "module, or one the run built once for a loop): not counted")
            continue
        seen[id(value)] = path
        children = []
        if type(value) is SelfFact:
            for name, child in value.attributes.items():
                child_path = ".".join(p for p in (path, name) if p)
                if type(child) is TensorFact:
                    _count_tensor(run, result, value, name, child, copies, path, chain)
                    continue
                for key, tensor, count in parameter_containers.items(child) or ():  # nn.ParameterList / Dict
                    times = Polynomial.from_dim(count) if count != 1 else 1
                    if times is None:
                        result.reasons.append(f"{child_path}: the number of parameters appended is not known")
                        continue
                    _count_tensor(run, result, value, f"{name}.{key}", tensor, copies * times, path, chain)
                children.append((name, child, copies))
            instance = run.instance(value)
            contents = instance.contents if instance is not None else None
            if _is_module(contents):  # `class Scaled(nn.Embedding)`: torch's module built by super().__init__
                children.append(("", contents, copies))  # holds the object's own `weight`, at its path
        elif type(value) in (ModuleList, Sequential):
            count = value.count
            if count is not None:
                times = Polynomial.from_dim(count)
                if times is None:
                    result.reasons.append(f"{path}: the number of repeated modules is not known")
                    continue
                children = [("", value.items[0], copies * times)] if value.items else []
            else:
                children = [(str(i), item, copies) for i, item in enumerate(value.items)]
        elif type(value) is ModuleDict:
            children = [(name, item, copies) for name, item in value.items]
        elif type(value) in (ModuleFact, Embedding):
            found = ledger.held.get(id(value))
            if found is None or found[0] is not value:
                result.reasons.append(f"{path}: its parameters were not recorded")
                continue
            held = found[1]
            if isinstance(held, str):
                result.reasons.append(f"{path}: {held}")
                continue
            for tensor in held:
                key = (id(value), tensor.name)
                if key not in ledger.ties:
                    result.tensors.append((copies, tensor))
                    result.paths.append(path)
                    result.holders.append((key, chain))
                else:
                    result.tied.setdefault(ledger.ties[key], []).append(chain)
        # a container's items, and the torch module a subclass was built as, run when it runs
        # (nn.Sequential calls each; `super().forward(x)`); an attribute is used only where it is read
        passes = chain if type(value) is not SelfFact else ()
        for name, child, times in children:
            if _is_module(child):
                within = chain if name == "" and type(value) is SelfFact else passes
                pending.append((child, times, ".".join(p for p in (path, str(name)) if p), within))
    return result


def _count_tensor(run, result, owner, name: str, tensor, copies, path: str, chain) -> None:
    """`owner.<name>` when it is a parameter (a buffer or a plain tensor attribute is not)."""
    layout = run.storage.layout(tensor)
    if layout is None or not layout.storage.parameter:
        return
    if tensor.shape is None:
        result.reasons.append(f"{'.'.join(p for p in (path, name) if p)}: the shape of the parameter is not known")
        return
    result.tensors.append((copies, ParameterTensor(name, tuple(tensor.shape), tensor.dtype)))
    result.paths.append(path)
    result.holders.append(((id(owner), name), chain))


def _declared_ties(run, root) -> str | None:
    """Hugging Face's `_tied_weights_keys = {"lm_head.weight": "transformer.wte.weight"}` on the entry's
    class: `post_init()` ties them when the config's `tie_word_embeddings` is true (the ledger then
    counts the shared tensor once). Returns why the count cannot be exact, or None."""
    instance = run.instance(root)
    if instance is None:
        return None
    declared = None
    for statement in instance.cls.body.body:
        line = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and statement.body else None
        if isinstance(line, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == "_tied_weights_keys"
                                                for t in line.targets):
            declared = line.value
    if declared is None:
        return None
    tie = run.config_values.get("tie_word_embeddings")
    if tie is False:
        return None
    if tie is not True:
        return "the model declares _tied_weights_keys and whether the config ties them is not known"
    if not isinstance(declared, cst.Dict):
        return "_tied_weights_keys is not a mapping of parameter names"
    for element in declared.elements:
        key, value = getattr(element, "key", None), getattr(element, "value", None)
        if not (isinstance(key, cst.SimpleString) and isinstance(value, cst.SimpleString)):
            return "_tied_weights_keys is not a mapping of parameter names"
        target, source = (_named_parameter(root, node.evaluated_value) for node in (key, value))
        if target is None or source is None:
            return f"a tied parameter of _tied_weights_keys is not found: {key.evaluated_value}"
        run.parameters.ties[(id(target[0]), target[1])] = (id(source[0]), source[1])
    return None


def _named_parameter(root, dotted: str):
    """(module object, parameter name) of `transformer.wte.weight` under the root, or None."""
    *path, name = dotted.split(".")
    value = root
    for part in path:
        if type(value) is SelfFact:
            value = value.attributes.get(part)
        elif type(value) is ModuleDict:
            value = dict(value.items).get(part)
        else:
            return None
    return (value, name) if type(value) in (ModuleFact, Embedding, SelfFact) else None


def _holds_parameters(value) -> bool:
    if type(value) in (ModuleFact, Embedding):
        return True
    if type(value) is SelfFact:
        return any(type(v) is TensorFact or _is_module(v) for v in value.attributes.values())
    return type(value) in (ModuleList, ModuleDict, Sequential)


def _is_module(value) -> bool:
    return type(value) in (SelfFact, ModuleList, ModuleDict, Sequential, ModuleFact, Embedding,
                           python_values.ModuleChoice)


def numel(tensor: ParameterTensor):
    """The tensor's element count as a polynomial in the dims, or None (a size not known)."""
    return Polynomial.from_dims(tensor.shape)
