"""Python-level idioms model code builds its modules with, for a whole-model run: lists grown by
`append` in loops or built by comprehensions over `range(n)` (`zip`/`enumerate`: zipping.py),
`functools.partial`, and conditional expressions decided like `if` (an undecided one costs each side).
Lambdas and `map` are in lambdas.py; loops over lists of different modules in unrolled_loops.py.

Everything here either knows the value exactly or says unknown (None): a list appended to under a
loop whose trip count is not known is unknown, never a list of one."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from shape_annotations import BinOp, Const, simplify_dim

from ...analysis import call_sites, op_table
from ...analysis.arguments import CallArgs
from ...analysis.calls import module_constructor
from ...analysis.site_registry import FUNCTIONS as SITE_FUNCTIONS
from ...analysis.facts import DimFact, ModuleFact, ScalarFact, SelfFact, SequenceFact, TensorFact, known_int, merge_facts
from ...analysis.interpreter import UNHANDLED
from ...analysis.literals import int_value
from ..values import autograd_functions, execution_modes
from ..values.value_arguments import value_arguments
from ..values.library_layers import EINOPS_LAYERS, EinopsLayer, build_einops_layer, has_parameters
from ..values.objects import (
    CallableChoice, Choice, ClassRef, Embedding, FunctionRef, ModuleDict, ModuleList, Repeat, Sequential
)



@dataclass(eq=False)
class GrowingList:
    """A Python list literal that code may `append` to: (item, count) runs, and the loop depth it
    was made at, so an append inside a loop over n adds n copies."""

    depth: int
    runs: list = field(default_factory=list)  # [(fact, DimExpr count)]
    unknown: bool = False

    def as_module_list(self):
        """The ModuleList this list makes, or None when it cannot be said exactly."""
        if self.unknown:
            return None
        if all(count == Const(1) for _, count in self.runs):
            return ModuleList(tuple(item for item, _ in self.runs))
        if len(self.runs) == 1:
            item, count = self.runs[0]
            return ModuleList((item,), count)
        return None


@dataclass(frozen=True)
class Partial:
    """`functools.partial(f, *args, **kwargs)`: the callee as written (a canonical name or a fact)
    and the bound argument facts."""

    name: str | None  # canonical dotted name of a library callee (`torch.nn.Linear`)
    callee: object  # a FunctionRef / ClassRef / Partial of the tree, when name is None
    positional: tuple
    keywords: tuple  # ((name, fact), ...)
    # what Python holds: a `functools.partial` object ("partial"), a library class used as a value
    # ("class": `act_layer=nn.GELU`) or a bound method ("method": a classmethod read off its class,
    # an autograd Function's `apply`); isinstance and `.func`/`.keywords` read it (callable_values)
    made_by: str = "partial"


@dataclass(frozen=True)
class ModuleChoice:
    """`DropPath(p) if p > 0. else nn.Identity()` undecided when built: calling it costs each side."""

    condition: str
    sides: tuple  # (module, module)


def library_class(interp, node):
    """`nn.GELU` or `GELU` imported from torch.nn, used as a value (`act_layer=nn.GELU`): a
    partial with nothing bound, so calling it builds the module."""
    name = interp.ctx.settings.imports.resolve(node)
    if name is None or not name.startswith("torch.nn.") or name.count(".") != 2 or not name[9:10].isupper():
        return None
    return Partial(name, None, (), (), "class")


def class_function(run, class_ref, name: str):
    """A function read from its class, as Python reads it: a `@staticmethod` (a factory such as
    TransformerLens' `MLPFactory.create_mlp`) or a plain method (`original_init = cls.__init__`, called
    later with the object); a `@classmethod` is bound to the class it is read from, as Python binds
    it (`cls` is the subclass: `AutoModel.from_config` runs with `cls` the AutoModel); a property is
    not a function (None)."""
    from ...analysis.imports import dotted_name
    from ..values.inheritance import find_method

    found = find_method(run, class_ref.source, class_ref.node, name)
    if found is None:
        applied = autograd_functions.apply_of(run, class_ref, name)  # `Scan.apply` of a torch.autograd.Function
        return None if applied is None else Partial(None, applied, (), (), "method")
    source, method = found
    decorators = {dotted_name(d.decorator) for d in method.decorators}
    if "classmethod" in decorators:
        return Partial(None, FunctionRef(source, method), (class_ref,), (), "method")
    if "property" in decorators:
        return None
    return FunctionRef(source, method)


_CONTAINERS = ("ModuleList", "Sequential", "ModuleDict")


def container_base(class_ref) -> str | None:
    """A class of the tree that only subclasses a torch container (`class TypedModuleList(
    nn.ModuleList, Generic[T])`, no `__init__` of its own): the container it builds."""
    body = class_ref.node.body.body if isinstance(class_ref.node.body, cst.IndentedBlock) else []
    if any(isinstance(s, cst.FunctionDef) and s.name.value == "__init__" for s in body):
        return None
    imports = class_ref.source.ctx.settings.imports
    for base in class_ref.node.bases:
        name = imports.resolve(base.value) or ""
        if name.startswith("torch.nn.") and name.rsplit(".", 1)[-1] in _CONTAINERS:
            return name.rsplit(".", 1)[-1]
    return None


def is_module_value(value) -> bool:
    return type(value) in (SelfFact, ModuleFact, ModuleList, ModuleDict, Sequential, Embedding, EinopsLayer,
                           ModuleChoice)


# -- lists -------------------------------------------------------------------------------------------

def empty_list(interp):
    return GrowingList(len(interp.run.loop_counts))


def append(interp, receiver, args):
    """`layers.append(Block(...))`: the item once per iteration of the loops entered since the
    list was made."""
    item = interp.eval(args.get(0, "object")) if len(args.positional) == 1 and not args.keywords else None
    _add(interp, receiver, None if item is None else (item,))
    return None


def extend(interp, receiver, args):
    """`modules.extend([conv, norm, act])`: each item, in order, as `append` adds it; an iterable
    whose items are not known makes the list unknown (never a list that lacks them)."""
    value = interp.eval(args.get(0, "iterable")) if len(args.positional) == 1 and not args.keywords else None
    if type(value) is GrowingList:
        listed = None if value.unknown or any(count != Const(1) for _, count in value.runs) else value.runs
        items = None if listed is None else tuple(item for item, _ in listed)
    else:
        items = value.items if type(value) is SequenceFact or type(value) is ModuleList and value.count is None \
            else None
    _add(interp, receiver, items)
    return None


def changed_otherwise(interp, receiver, args):
    """`layers.insert(0, stem)`, `layers.pop()`, ...: a change the list's runs do not follow, so the
    list is unknown from here on (its arguments still run for their sites)."""
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)
    receiver.unknown = True
    return None


def _add(interp, receiver, items) -> None:
    if items is None:
        receiver.unknown = True
        return
    count = Const(1)
    for loop_count in interp.run.loop_counts[receiver.depth:]:
        if loop_count is None:
            receiver.unknown = True
            return
        count = simplify_dim(BinOp("*", count, loop_count))
    receiver.runs.extend((item, count) for item in items)


def list_value(value):
    """A list of modules as a ModuleList (repeated or listed), whatever built it."""
    if type(value) is GrowingList:
        return value.as_module_list()
    if type(value) is ModuleList:
        return value
    if type(value) is SequenceFact and all(is_module_value(i) for i in value.items):
        return ModuleList(tuple(value.items))
    return None


def comprehension(interp, node, data=None):
    """`[Block(i) for i in range(n)]`: the element built once and repeated n times; its cost, if it
    runs code, under a loop of n; another element, what `data(interp, node, count, item)` makes
    of it (repeated_data.py). Anything else: the comprehension walked, its value unknown."""
    loop = node.for_in
    count = None
    if loop.inner_for_in is None and not loop.ifs and isinstance(loop.iter, cst.Call) \
            and isinstance(loop.iter.func, cst.Name) and loop.iter.func.value == "range" \
            and len(loop.iter.args) == 1 and "range" not in interp.env:
        argument = loop.iter.args[0].value
        literal = int_value(argument)
        fact = interp.eval(argument) if literal is None else None
        if literal == 0 or literal is None and known_int(fact, interp.run.sizes) == 0:
            return SequenceFact(())  # `range(0)`: no element is built (`*[Block() for _ in range(depth - 1)]`)
        count = interp.dim_of(argument) if literal is not None else interp.dim_from(argument, fact)
    if count is None:
        interp.walk(node)
        return None
    inner = range_scope(interp, loop.target)
    repeat = Repeat(count, [])
    with interp.run.collecting(repeat.entries):
        item = inner.eval(node.elt)
    interp.run.add(repeat)
    if is_module_value(item):
        return ModuleList((item,), count)
    return None if data is None else data(interp, node, count, item)


def range_scope(interp, target):
    """The scope of a comprehension's element read once for all of `range(n)`: its own loop names
    (not the enclosing function's of the same name), an int of unknown value for a plain name, as
    range yields (`s[:, :, layer_id]` drops the dim whatever the index)."""
    if isinstance(target, cst.Name):
        return interp.with_env({**interp.env, target.value: ScalarFact()})
    return interp.with_env({**interp.env, **{name: None for name in target_names(target)}})


def target_names(target) -> list[str]:
    """The names an assignment or loop target binds (`a`, `a, (b, *c)`, `[a, b]`)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


_METADATA_ATTRIBUTES = op_table.METADATA_ATTRIBUTES
_METADATA_METHODS = op_table.METADATA_METHODS  # the metadata entries of analysis/op_table.py


def is_metadata(node) -> bool:
    """`x.shape`, `x.device`, `x.size(1)`: read from a tensor without a gradient flowing through,
    so `torch.arange(x.shape[1], device=x.device)` does not need one because x does."""
    # `type(...) is`: LibCST's classes are ABCs, whose isinstance is several times slower, and this
    # runs for every expression a whole-model run evaluates (its concrete classes have no subclasses)
    kind = type(node)
    if kind is cst.Attribute:
        return node.attr.value in _METADATA_ATTRIBUTES
    return kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _METADATA_METHODS


# -- builtins on dims ----------------------------------------------------------------------------------

def float_literal(node: cst.Float):
    """`4.` or `4.0` (an mlp ratio) is the integer 4 where a size is computed from it."""
    try:
        number = float(node.value)
    except ValueError:
        return None
    return DimFact(Const(int(number))) if number.is_integer() and 1 <= number <= 2**31 else None


# -- functools.partial ----------------------------------------------------------------------------------

def make_partial(interp, args):
    if args.starred or not args.positional:
        return UNHANDLED
    func = args.positional[0]
    name = interp.ctx.settings.imports.resolve(func)
    callee = None
    if name is None or not name.startswith(("torch.", "einops.")):
        name = None
        callee = interp.eval(func)
        if type(callee) not in (FunctionRef, ClassRef, Partial):
            return None
    positional = tuple(interp.eval(value) for value in args.positional[1:])
    keywords = tuple((key, interp.eval(value)) for key, value in args.keywords.items())
    return Partial(name, callee, positional, keywords)


def call_partial(interp, node, partial: Partial, args):
    """Call the partial's callee with its bound arguments and the call's, as Python does: bound
    positionals first, call keywords over bound ones."""
    with value_arguments(interp, partial.positional, partial.keywords) as bound:
        # the call's `*seq`/`**mapping` stay spliced: a `**kwargs` read as a positional binds a parameter
        merged = CallArgs([*bound.positional, *args.positional], {**bound.keywords, **args.keywords}, args.starred,
                          args.stars)
        if partial.name is not None:
            return call_named(interp, node, merged, partial.name)
        return call_value(interp, node, partial.callee, merged)


# -- conditional expressions ------------------------------------------------------------------------------

def conditional(interp, node: cst.IfExp):
    """`a if test else b`: a decided test evaluates its side only; an undecided one costs each side
    (a Choice, as an `if` statement does) and yields what both agree on."""
    run = interp.run
    decision = run.decide(interp, node.test)
    if decision is True:
        return interp.eval(node.body)
    if decision is False:
        return interp.eval(node.orelse)
    sides = ([], [])
    with run.collecting(sides[0]):
        body = interp.eval(node.body)
    with run.collecting(sides[1]):
        orelse = interp.eval(node.orelse)
    if sides[0] or sides[1]:
        run.add(Choice(interp.ctx.code(node.test), sides))
        run.note_undecided(interp.ctx.code(node.test))
    if body is orelse:
        return body
    if execution_modes.is_grad_mode(body) or execution_modes.is_grad_mode(orelse):  # `nullcontext() if k else no_grad()`
        return execution_modes.choose(interp.ctx.code(node.test), body, orelse)
    if is_module_value(body) and is_module_value(orelse):
        return ModuleChoice(interp.ctx.code(node.test), (body, orelse))
    if _is_class(body) and _is_class(orelse):  # `Attention if n_kv is None else GroupedQueryAttention`
        sides = [s for side in (body, orelse) for s in (side.sides if type(side) is CallableChoice else (side,))]
        return CallableChoice(interp.ctx.code(node.test), tuple(sides))
    return merge_facts(body, orelse, interp.ctx.settings.sizes) if type(body) is type(orelse) is TensorFact or \
        type(body) is type(orelse) and type(body) in (DimFact, SequenceFact) else None


def _is_class(value) -> bool:
    """Classes of the tree only: what each side builds is a module whose forward takes the caller's
    inputs. Functions applied to data are not chosen between: conditions decided apart elsewhere
    (a block making 4-D inputs under the same flag) would pair a side with inputs it never gets."""
    return type(value) is ClassRef or type(value) is CallableChoice


# -- dispatch --------------------------------------------------------------------------------------------

def library_named(interp, args, name: str):
    """A library callable this module builds a value of, by its imported name: an einops layer
    (`Rearrange("b n d -> b d n")`) or a partial; UNHANDLED for any other."""
    if name == "functools.partial":
        return make_partial(interp, args)
    if name in EINOPS_LAYERS:
        return build_einops_layer(interp, EINOPS_LAYERS[name], args)
    return UNHANDLED


def call_value(interp, node, callee, args):
    """Call a value this module or library_layers made (or a function/class of the tree)."""
    run = interp.run
    if type(callee) is Partial:
        return call_partial(interp, node, callee, args)
    if type(callee) is FunctionRef:
        return run.call_function(interp, node, callee, args)
    if type(callee) is ClassRef:
        return run.construct(interp, node, callee, args)
    if type(callee) is autograd_functions.AutogradApply:
        return autograd_functions.call_apply(interp, node, callee, args)
    if type(callee) is SelfFact and run.instance(callee) is not None:  # `partial(block, **kwargs)(x)`
        return run.call_instance(interp, node, callee, args)
    if type(callee) is ModuleFact and callee.kind in ("linear", "conv"):
        return run.call_linear(interp, node, callee, args)
    if type(callee) is EinopsLayer:
        fact = interp.eval(args.get(0, "input"))
        for value in [*args.positional[1:], *args.keywords.values()]:
            interp.eval(value)
        return run.apply_layer(interp, node, callee, fact)
    return None


def call_named(interp, node, args, name: str):
    """A library callee named by a partial (`partial(nn.Linear, bias=False)`), with merged args."""
    handled = library_named(interp, args, name)
    if handled is not UNHANDLED:
        return handled
    if name.startswith("builtins."):  # `rd_round_fn(x)` of `rd_round_fn = round` (builtin_functions.py)
        return interp.call_builtin_value(name[len("builtins."):], args)
    if name.startswith("torch.nn.") and not name.startswith("torch.nn.functional."):  # F.softmax: below
        built = interp.run.build_container(interp, name.rsplit(".", 1)[-1], args)
        if built is not UNHANDLED:
            return built
        module = module_constructor(interp, name, args)
        if module is not None:  # its parameters, for memory (memory_parameters)
            interp.run.parameters.constructed(interp.run, interp, name.rsplit(".", 1)[-1], args, module)
        if module is not None and has_parameters(name, args):
            interp.run.parametrised(module)
        if module is not None:
            return module
    elif name in SITE_FUNCTIONS:
        return call_sites.record_function_site(interp, node, name, args)
    elif name in op_table.FUNCTIONS:
        return op_table.FUNCTIONS[name](interp, args)
    for value in [*args.positional, *args.keywords.values()]:
        interp.eval(value)
    return None


