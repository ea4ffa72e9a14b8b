"""Evaluates expressions to facts, recording every call site it meets on the way.

Each expression is evaluated exactly once, in statement order, so each call site is recorded once.
Expressions we do not understand are still walked, so a matmul nested in an unknown call, a
comprehension or a lambda is found (unresolved) rather than missed.
"""

from __future__ import annotations

from contextlib import contextmanager

import libcst as cst

from shape_annotations import BinOp, Const, Sym, Unknown, simplify_dim

from . import convolutions, shape_ops
from .annotations import string_literal
from .given_values import VALUE_ARGUMENTS
from .literals import int_value
from .call_sites import record_matmul_operator
from .calls import evaluate_call
from .facts import (
    CONFIG,
    CONFIG_NAMES,
    DimFact,
    DTypeFact,
    ModuleFact,
    ScalarFact,
    SelfFact,
    SequenceFact,
    StringFact,
    TensorFact,
    elementwise,
    merge_facts,
)
from .indexing import subscript
from .interpreter import UNHANDLED

_ARITHMETIC = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.FloorDivide: "//",
}
_ELEMENTWISE = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power, cst.Modulo,
                cst.BitAnd, cst.BitOr, cst.BitXor)


_SYMBOLIC_POWER = 8  # `d ** k` of a symbolic d is written out as k factors up to this k


def _power(base, exponent):
    """`a ** b` of two known sizes, exact, when it stays within 2**63-1; None otherwise (checked by
    bit length first: `10 ** 10 ** 10` must not be computed)."""
    if type(exponent) is Const and type(base) is not Const and 0 <= exponent.value <= _SYMBOLIC_POWER:
        # a size not known here raised to a small power (`(image_size // patch_size) ** 2`): the
        # product Python computes, kept symbolic as `d * d`
        product = Const(1)
        for _ in range(exponent.value):
            product = BinOp("*", product, base)
        return DimFact(simplify_dim(product))
    if type(base) is not Const or type(exponent) is not Const:
        return None
    if base.value == 1:
        return DimFact(Const(1))
    if exponent.value * (base.value.bit_length() - 1) > 63:
        return None
    value = base.value ** exponent.value
    return DimFact(Const(value)) if value <= 2**63 - 1 else None


class Evaluator:
    def __init__(self, ctx, env: dict, autocast: str | None = None) -> None:
        self.ctx = ctx
        self.env = env
        self.autocast = autocast  # the dtype of an enclosing `torch.autocast` block

    # -- dispatch -------------------------------------------------------------------------------
    def eval(self, node):
        if node is None:
            return None  # an optional argument the call did not pass
        if type(node) in VALUE_ARGUMENTS:
            return node.value
        handler = getattr(self, "_eval_" + type(node).__name__, None)
        if handler is None:
            self.walk(node)
            return None
        return handler(node)

    def walk(self, node) -> None:
        """Evaluate every sub-expression for its call sites, discarding the facts."""
        for child in self.ctx.children(node):
            if isinstance(child, cst.BaseExpression):
                self.eval(child)
            elif isinstance(child, cst.CSTNode):
                self.walk(child)

    # -- leaves ---------------------------------------------------------------------------------
    def unify_dims(self, node, undecided) -> bool:
        """Bind unsized dims a site's shapes could not prove equal to a sized one (whole-model runs:
        dim_unification); per-file linting keeps the dims the user declared."""
        return False

    def module_parameter(self, module, name: str, shape: tuple, dtype):
        """The tensor a torch module's call reads as its parameter `name` (`shape` may be a slice
        of it: one projection of a packed weight); a whole-model run's is the module's parameter,
        needing a gradient in training."""
        return TensorFact(shape, dtype, framework="torch")

    def derived(self, fact, sources) -> None:
        """`fact` was computed from `sources` inside a library call the analysis models (a whole-model
        run marks it needing a gradient when one of them does)."""

    @contextmanager
    def module_scope(self, module):
        """Sites recorded inside belong to `module` (a whole-model run's module path)."""
        yield

    def listed_items(self, fact):
        """The items of a list or tuple value, when each is known (what `torch.cat(xs)` reads); the
        whole-model run's lists built by `append` too."""
        return fact.items if type(fact) is SequenceFact else None

    def _eval_Name(self, node: cst.Name):
        name = node.value
        known = self.env.get(name)
        if known is not None:
            if type(known) is TensorFact:
                self.ctx.bind(name, "use", node, known)
            return known
        if name in CONFIG_NAMES:
            return CONFIG  # `cfg: HookedTransformerConfig` is still the config object
        if name in self.env:
            return None
        resolved = self.ctx.settings.imports.resolve_text(name)
        return self._dtype_of_name(resolved) if resolved else None

    def _eval_Integer(self, node: cst.Integer):
        value = int_value(node)
        return DimFact(Const(value)) if value is not None and value >= 1 else ScalarFact()

    def _eval_Float(self, node):
        return ScalarFact()

    def _eval_Imaginary(self, node):
        return ScalarFact()

    def _eval_SimpleString(self, node: cst.SimpleString):
        literal = string_literal(node)
        return StringFact(literal[0]) if literal else None

    def _eval_ConcatenatedString(self, node):
        left, right = self.eval(node.left), self.eval(node.right)
        if type(left) is StringFact and type(right) is StringFact:
            return StringFact(left.value + right.value, left.origin or right.origin)
        return None

    def _eval_Tuple(self, node: cst.Tuple):
        return SequenceFact(tuple(self._element(e) for e in node.elements))

    def _eval_List(self, node: cst.List):
        return SequenceFact(tuple(self._element(e) for e in node.elements))

    def _element(self, element):
        fact = self.eval(element.value)
        return None if isinstance(element, cst.StarredElement) else fact

    def _eval_IfExp(self, node: cst.IfExp):
        self.eval(node.test)
        return merge_facts(self.eval(node.body), self.eval(node.orelse), self.ctx.settings.sizes)

    def _eval_NamedExpr(self, node: cst.NamedExpr):
        fact = self.eval(node.value)
        if isinstance(node.target, cst.Name):
            self.env[node.target.value] = fact
            if type(fact) is TensorFact:
                self.ctx.bind(node.target.value, "assignment", node.target, fact)
        return fact

    def _eval_Await(self, node):
        return self.eval(node.expression)

    def _eval_UnaryOperation(self, node: cst.UnaryOperation):
        value = int_value(node)
        if value is not None:
            return DimFact(Const(value)) if value >= 1 else ScalarFact()
        fact = self.eval(node.expression)
        if type(fact) is TensorFact:
            return fact.with_shape(fact.shape)
        return ScalarFact() if type(fact) in (ScalarFact, DimFact) else None

    # -- attributes -----------------------------------------------------------------------------
    def _dtype_of_name(self, dotted: str):
        from estimator import lookup_dtype

        head = dotted.split(".")[0]
        if head in ("torch", "numpy", "jax", "ml_dtypes") and "." in dotted:
            dtype = lookup_dtype(dotted)
            if dtype is not None:
                return DTypeFact(dtype.name)
        return None

    def _eval_Attribute(self, node: cst.Attribute):
        resolved = self.ctx.settings.imports.resolve(node)
        if resolved is not None:
            dtype = self._dtype_of_name(resolved)
            if dtype is not None:
                return dtype
            if resolved.split(".")[0] in ("torch", "numpy", "jax", "einops", "opt_einsum"):
                return None  # a module attribute that is not a value we model
        return self.attribute_of(self.eval(node.value), node.attr.value)

    def attribute_of(self, receiver, name: str):
        if type(receiver) is TensorFact:
            return self._tensor_attribute(receiver, name)
        if type(receiver) is SequenceFact and receiver.names:
            return receiver.field(name)  # `x.max(dim=-1).values`
        if receiver is CONFIG:
            return DimFact(Sym(name))
        if type(receiver) is SelfFact:
            value = receiver.attributes.get(name)
            # `self.cfg = Config.unwrap(cfg)`: still the config object, whatever built it
            return CONFIG if value is None and name in CONFIG_NAMES else value
        if type(receiver) is ModuleFact and receiver.kind == "linear" and name == "weight":
            in_dim = receiver.in_dim if receiver.in_dim is not None else Unknown("in_features")
            return TensorFact((receiver.out_dim, in_dim), receiver.dtype, framework="torch")
        if type(receiver) is ModuleFact and receiver.kind == "conv" and name == "weight":
            shape = convolutions.weight_shape(receiver)
            return None if shape is None else TensorFact(shape, receiver.dtype, framework="torch")
        return None

    def _tensor_attribute(self, fact: TensorFact, name: str):
        shape = fact.shape
        if name == "shape":
            return None if shape is None or shape_ops.has_group(shape) else SequenceFact(tuple(DimFact(d) for d in shape))
        if name == "dtype":
            # a tensor of no stated dtype has the default one: `x.to(h.dtype)` casts back to it
            return DTypeFact(fact.dtype or None)
        if name in ("T", "H") and shape is not None:
            return fact.with_shape(shape_ops.reverse(shape))
        if name in ("mT", "mH") and shape is not None and len(shape) >= 2:
            return fact.with_shape(shape_ops.transpose(shape, -2, -1))
        if name in ("real", "imag", "data"):
            return fact
        return None

    # -- operators ------------------------------------------------------------------------------
    def _eval_BinaryOperation(self, node: cst.BinaryOperation):
        if isinstance(node.operator, cst.MatrixMultiply):
            return record_matmul_operator(self, node)
        left, right = self.eval(node.left), self.eval(node.right)
        return self.arithmetic(node.operator, left, right)

    def arithmetic(self, operator, left, right):
        if isinstance(operator, cst.Power) and type(left) is DimFact and type(right) is DimFact:
            return _power(left.dim, right.dim)  # `range(10**12)` is `range(1000000000000)`
        if type(left) is DimFact and type(right) is DimFact and type(operator) in _ARITHMETIC:
            return DimFact(simplify_dim(BinOp(_ARITHMETIC[type(operator)], left.dim, right.dim)))
        if isinstance(operator, _ELEMENTWISE):
            return elementwise(left, right, self.ctx.settings.sizes)
        return None

    def _eval_Comparison(self, node: cst.Comparison):
        left = self.eval(node.left)
        result = left if type(left) is TensorFact else None
        for target in node.comparisons:
            right = self.eval(target.comparator)
            if type(left) is TensorFact or type(right) is TensorFact:
                result = elementwise(left, right, self.ctx.settings.sizes)
                result = result.with_dtype("bool") if type(result) is TensorFact else None
        return result

    # -- subscripts -----------------------------------------------------------------------------
    def _eval_Subscript(self, node: cst.Subscript):
        return subscript(self, node)

    # -- calls ----------------------------------------------------------------------------------
    def _eval_Call(self, node: cst.Call):
        return evaluate_call(self, node)

    def call_code(self, node, args, name):
        return UNHANDLED  # a file on its own: calls of the file's code are not followed

    def dim_of(self, node) -> object | None:
        """A dim from an expression used as a size (`B`, `C // self.n_head`, `3 * config.n_embd`)."""
        value = int_value(node)
        if value is not None:
            return Const(value) if value >= 1 else None
        return self.dim_from(node, self.eval(node))

    def dim_from(self, node, fact) -> object | None:
        """dim_of of `node`, its value `fact` already evaluated."""
        if type(fact) is DimFact:
            return fact.dim
        if fact is None and isinstance(node, cst.Name):
            return Sym(node.value)  # an int we know nothing about, named by its variable: `n_head`
        if fact is None and isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and node.value.value == "self":
            return Sym(node.attr.value)  # `self.d_mlp` set where we cannot see (a base class)
        return None
