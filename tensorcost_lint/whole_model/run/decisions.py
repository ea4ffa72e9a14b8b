"""Branch decisions of a whole-model run: a condition is decided by `assume` (matched by its code),
by known values (booleans, None, strings, module objects) or by comparing dims bound to sizes;
anything else is undecided (None) and both sides are costed."""

from __future__ import annotations

import libcst as cst

from shape_annotations import Sym, evaluate_integer

from ...analysis.literals import int_value
from ...analysis.facts import CONFIG, DimFact, DTypeFact, SequenceFact, ScalarFact, SelfFact, StringFact, TensorFact, \
    elementwise
from ...analysis.interpreter import UNHANDLED
from ..library import library_values
from ..library.torch_namespaces import TorchNames
from ..python import callable_values, class_members, known_values, python_values
from .expressions import truth
from ..values.library_objects import IntFact, MappingFact, RecordFact, RegistryRef, TorchFunction
from ..values.mapping_keys import ClassKey
from ..values.objects import NONE, BoolFact, ClassRef, FunctionRef

_COMPARE = {cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">=",
            cst.Equal: "==", cst.NotEqual: "!="}


def decide(run, interp, node):
    text = " ".join(interp.ctx.code(node).split())
    if text in run.assume:
        interp.walk(node)
        return bool(run.assume[text])
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        inner = decide(run, interp, node.expression)
        return None if inner is None else not inner
    if isinstance(node, cst.BooleanOperation):
        left = decide(run, interp, node.left)
        if left is isinstance(node.operator, cst.Or):  # short-circuit: Python never evaluates the right
            return left
        right = decide(run, interp, node.right)
        if isinstance(node.operator, cst.And):
            return False if False in (left, right) else (True if left and right else None)
        return True if True in (left, right) else (False if left is False and right is False else None)
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        contained = class_members.contains(interp, node)  # `type(config) in cls._registry`: `__contains__` runs
        if contained is not UNHANDLED:
            return None if contained is None else contained.value
        return _compare(run, interp, node)
    return truth(run, interp.eval(node))  # a dim bound to a size is true; a module, a partial too


def _compare(run, interp, node):
    target = node.comparisons[0]
    left, right = interp.eval(node.left), interp.eval(target.comparator)
    if may_be_none(run, interp, target.operator, node.left, left, right):
        return None
    return decide_values(run, target.operator, left, node.left, right, target.comparator)


def may_be_none(run, interp, operator, node, fact, right) -> bool:
    """`cfg.n_key_value_heads is None` where no config.json holds the field and `dims` does not
    declare it: the field reads as the dim of its name, but an optional setting may well be None,
    so the comparison is undecided (each side costed), never decided as `not None`."""
    if not isinstance(operator, (cst.Is, cst.IsNot)) or right is not NONE:
        return False
    if type(fact) is not DimFact or type(fact.dim) is not Sym or not isinstance(node, cst.Attribute):
        return False
    if not known_values.side_effect_free(node.value) or interp.eval(node.value) is not CONFIG:
        return False
    return _value(run, fact) is None


def decide_values(run, operator, left, left_node, right, right_node):
    """`left <operator> right` from the operands' facts (and their nodes, for literal numbers that
    facts keep only as sizes), or None when it is not known."""
    if isinstance(operator, (cst.Is, cst.IsNot)):
        if type(right) is BoolFact:
            same = _is_bool(left, right.value)  # `config.gating is True`: True and False are singletons
            return None if same is None else same == isinstance(operator, cst.Is)
        if type(left) is SelfFact and type(right) is SelfFact and (left is not right or id(left) not in run.copy_indices):
            # each object built is its own fact (`language_model is not self`); one fact standing for
            # a list's n copies may be two of them
            return (left is right) == isinstance(operator, cst.Is)
        if right is not NONE:
            return None
        known = left is NONE or left is CONFIG or type(left) in (
            TensorFact, SelfFact, BoolFact, StringFact, DimFact, ScalarFact, IntFact, MappingFact, RecordFact,
            FunctionRef, ClassRef, TorchFunction, SequenceFact)
        if not known and not known_values.is_object(left):
            return None
        same = left is NONE
        return same if isinstance(operator, cst.Is) else not same
    if isinstance(operator, (cst.In, cst.NotIn)):
        contained = _contains(run, left, right)
        return None if contained is None else contained == isinstance(operator, cst.In)
    symbol = _COMPARE.get(type(operator))
    if symbol in ("==", "!=") and NONE in (left, right):  # `decoder == encoder` with one left None
        other = right if left is NONE else left
        if other is NONE or type(other) in (BoolFact, StringFact, DimFact, IntFact, ScalarFact):
            return (other is NONE) == (symbol == "==")  # None equals only None (plain values' __eq__)
        return None
    if symbol in ("==", "!=") and type(left) is DTypeFact and type(right) is DTypeFact:
        # `pixel_values.dtype != self.proj.weight.dtype`: a dtype the code never states is the
        # default one (the config's `default_dtype`), so two such are equal whatever it is
        default = getattr(run, "default_dtype", None)
        a, b = left.dtype or default, right.dtype or default
        if left.dtype != right.dtype and None in (a, b):
            return None  # a stated dtype against the default one, which the run was not given
        return (a == b) == (symbol == "==")
    if symbol in ("==", "!=") and MappingFact in (type(left), type(right)):
        a, b = _structure(run, left), _structure(run, right)  # `overrides.get(i, {}) != reference`
        return None if _UNKNOWN in (a, b) else (a == b) == (symbol == "==")
    values = [_number(n) if _number(n) is not None else _value(run, f)
              for n, f in ((left_node, left), (right_node, right))]
    if symbol is None or None in values:
        return None
    a, b = values
    if type(a) is not type(b) and not {type(a), type(b)} <= {int, float}:
        return None
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[symbol]


def _is_bool(left, value: bool) -> bool | None:
    """Whether `left` is the bool `value` itself; None where the fact may hold any value (a config
    field no config.json sets reads as a dim of its name)."""
    if type(left) is BoolFact:
        return left.value == value
    if left is NONE or type(left) in (StringFact, TensorFact, SequenceFact, MappingFact, IntFact):
        return False
    return None


def _number(node):
    """A literal number (`0`, `0.0`): its value, which facts keep only for sizes >= 1."""
    if isinstance(node, cst.Integer):
        return int_value(node)
    if isinstance(node, cst.Float):
        try:
            return float(node.value)
        except ValueError:
            return None
    return None


def _value(run, fact):
    if type(fact) is DimFact:  # as the integer the program computes: `padding_length > 0` may be 0
        return evaluate_integer(fact.dim, run.sizes)
    if type(fact) is StringFact:
        return fact.value
    if type(fact) is BoolFact:
        return int(fact.value)
    if type(fact) is IntFact:
        return fact.value
    if type(fact) is ScalarFact:  # a float the run knows (known_floats): `if scale <= 1:` with scale 32.0
        return run.floats.value(fact)
    return None


_UNKNOWN = object()  # an item whose value the run does not know


def _plain_item(run, fact):
    """A plain fact's Python value (a size's when its dims are bound), or _UNKNOWN."""
    if fact is NONE:
        return None
    if type(fact) is DimFact:
        value = evaluate_integer(fact.dim, run.sizes)
        return _UNKNOWN if value is None else value
    if type(fact) in (BoolFact, IntFact, StringFact):
        return fact.value
    return _UNKNOWN


def _structure(run, fact):
    """A known dict's Python value for `==` (its keys, and values that are None, numbers, strings or
    dicts themselves), or a plain value's; _UNKNOWN when any part is not known. A list or tuple in it
    is not compared: a SequenceFact does not say which it is, and `[1] != (1,)`."""
    if type(fact) is MappingFact:
        if known_values.partly_unknown(fact):
            return _UNKNOWN
        value = {}
        for key, item in fact.items:
            value[key] = _structure(run, item)
            if value[key] is _UNKNOWN:
                return _UNKNOWN
        return value
    if type(fact) is ScalarFact:
        number = 0.0 if fact is library_values.ZERO_FLOAT else run.floats.value(fact)
        return _UNKNOWN if number is None else number
    return _plain_item(run, fact)


def _holds_class(container: SequenceFact, identity):
    """A class in a known tuple, list or set: True when an item is that class (classes compare by
    identity); False when every item is another class or a plain value (no plain value equals a
    class); None when an item is not known."""
    unknown = False
    for member in container.items:
        key = callable_values.identity_key(member)
        if key is not None:
            if key == identity:
                return True
        elif not (member is NONE or type(member) in (StringFact, BoolFact, IntFact, DimFact)):
            unknown = True
    return None if unknown else False


def _contains(run, item, container):
    """`"dynamic" in self.rope_type`, `key in mapping`, `key in ("a", "b")` with known strings;
    `True in is_full` of known bools; a list built by appends (`DEPRECATED = []`) as the items it holds."""
    if type(container) is python_values.GrowingList:
        items = known_values.appended_items(container)
        container = SequenceFact(items) if items is not None else None
    if type(item) in (BoolFact, IntFact, DimFact) and type(container) is SequenceFact:
        # `layer_idx not in config.mlp_only_layers`: ints >= 1 are sizes, compared by their value
        wanted = _plain_item(run, item)
        values = [_plain_item(run, i) for i in container.items]
        if wanted is _UNKNOWN:
            return None
        if wanted in [v for v in values if v is not _UNKNOWN]:
            return True
        return None if _UNKNOWN in values else False
    if type(item) in (ClassRef, FunctionRef) and type(container) is MappingFact:
        # a class is a key by its identity (mapping_keys.ClassKey); a function never is one here
        if type(item) is ClassRef and ClassKey(item) in dict(container.items):
            return True
        return None if known_values.partly_unknown(container) else False
    if type(item) is ClassRef and type(container) is RegistryRef \
            and ClassKey(item) in (key for key, _, _ in container.mapping):
        return True  # `type(config) in HANDLERS`: a class the table is known to hold (absent: unknown)
    identity = callable_values.identity_key(item)
    if identity is not None and type(container) is SequenceFact:  # `norm_layer in _NORM_TYPES`
        return _holds_class(container, identity)
    if type(item) is not StringFact:
        return None
    if type(container) is TorchNames:  # `'silu' in dir(torch.nn.functional)`
        return container.holds(item.value)
    if type(container) is StringFact:
        return item.value in container.value
    if type(container) is MappingFact:
        if item.value in dict(container.items):
            return True
        return None if known_values.partly_unknown(container) else False
    if type(container) is RegistryRef and item.value in (key for key, _, _ in container.mapping):
        return True  # `name in _model_entrypoints`: a key the table is known to hold (absent: unknown)
    if type(container) is SequenceFact:  # `arch in ("OlmoeForCausalLM", "Olmo2ForCausalLM")`, `t in ('a', 'c')`
        values = [i.value for i in container.items if type(i) is StringFact]
        if item.value in values:
            return True
        known = sum(1 for i in container.items if type(i) is StringFact or i is NONE)
        return False if known == len(container.items) else None
    return None


def compare_known(interp, node: cst.Comparison):
    """A comparison of known plain values evaluated once (`(num % den) == 0`, `ind == n - 1`,
    `int(options.get('d', 0)) > 0`): its boolean when every operand is known; UNHANDLED (nothing
    evaluated) for a chain of comparisons whose operands are not free of call sites."""
    operands = [node.left, *(target.comparator for target in node.comparisons)]
    free = all(known_values.side_effect_free(operand) for operand in operands)
    if not free and len(operands) != 2:
        return UNHANDLED
    facts = [interp.eval(operand) for operand in operands]
    if any(type(fact) is TensorFact for fact in facts):
        if free:
            return UNHANDLED  # elementwise: the per-file reading (operands are free to evaluate again)
        result = elementwise(facts[0], facts[1], interp.ctx.settings.sizes)  # `x.sum(-1) > 0`, read once
        return result.with_dtype("bool") if type(result) is TensorFact else None
    result = True
    for (left, left_node), (right, right_node), target in zip(zip(facts, operands), zip(facts[1:], operands[1:]),
                                                              node.comparisons):
        if may_be_none(interp.run, interp, target.operator, left_node, left, right):
            return None
        decided = decide_values(interp.run, target.operator, left, left_node, right, right_node)
        if decided is None:
            return None
        result = result and decided
    return BoolFact(result)
