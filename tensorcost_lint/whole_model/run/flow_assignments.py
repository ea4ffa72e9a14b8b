"""Assignments in a whole-model flow: the names bound from a value computed from tensors that need a
gradient (GRAD_TAINT), stores into known dicts, class patches a decorator writes, tied weights,
annotated and starred targets, bitwise augmented assignments. A base of ModelFlow (model_flow.py)."""

from __future__ import annotations

import libcst as cst

from ...analysis.facts import CONFIG, SelfFact, SequenceFact, TensorFact
from ...analysis.function_flow import FunctionFlow
from ..python import class_decorators, class_members, config_objects, container_changes, known_values, \
    python_values
from . import expressions
from ..python.gradient_flow import flow_into, stored_into
from .model_evaluator import GRAD_TAINT
from ..values.objects import ClassRef, ModuleList


class FlowAssignments(FunctionFlow):
    """ModelFlow's assignment statements, over FunctionFlow's."""

    def _assign_statement(self, node, line) -> None:
        frames = self.run_.grad_frames
        frames.append(None)
        try:
            super()._assign_statement(node, line)
        finally:
            tainted = frames.pop()
        for target in node.targets:
            stored_into(self.run_, self.evaluator, target.target, tainted)  # `buf[:, i] = y`
            unpacked = isinstance(target.target, (cst.Tuple, cst.List))
            for name in python_values.target_names(target.target):
                own = tainted
                value = self.env.get(name)
                if self.run_.never_needs_grad(value):
                    own = None  # `top, picked = x.topk(2)`: the indices carry no gradient to what reads them
                elif own and unpacked and type(value) is TensorFact and self.run_.needs_grad(value):
                    # `out, state = self.attn(x)`: an item that needs a gradient stands for what it
                    # was computed from (out is not computed from state), not the whole tuple's
                    own = [value]
                if own and self.run_.mode == "training":
                    self.env[GRAD_TAINT + name] = own  # what the bound value was computed from
                    if not unpacked:
                        self.run_.mark(value, own)  # a shape comment may have replaced the fact
                else:
                    self.env.pop(GRAD_TAINT + name, None)

    def _augmented_assign(self, node) -> None:
        """`h += self.attn(x)`: the new `h` is computed from the old one and the value."""
        frames = self.run_.grad_frames
        frames.append(None)
        try:
            self._augmented_value(node)
        finally:
            tainted = frames.pop()
        if tainted and self.run_.mode == "training":
            for name in python_values.target_names(node.target):
                self.env[GRAD_TAINT + name] = tainted
            if expressions.is_plain(node.target):
                result = self.evaluator.eval(node.target)
                self.run_.mark(result, tainted)
                self.run_.saved_ops.augmented(self.run_, self.evaluator, node, result)  # `x *= y` saves y
        flow_into(frames, tainted)  # an enclosing expression (a callee's caller) as before

    def assign(self, target, fact, value_node) -> None:
        if isinstance(target, cst.Subscript) and container_changes.store_item(self.evaluator, target, fact):
            return  # `kwargs['k'] = v` on a known dict
        if isinstance(target, cst.Attribute) and known_values.side_effect_free(target.value):
            # `config.x = v`, `self.config.x = v`: the root config keeps what the code assigns on it
            if self.evaluator.eval(target.value) is CONFIG:
                config_objects.assign_attribute(self.run_, target.attr.value, fact, target)
                return
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            receiver = self.env.get(target.value.value)
            if type(receiver) is ClassRef:  # `experts_class.forward = forward` in a class decorator
                key = class_decorators.class_key(receiver.source, receiver.node.name.value)
                self.run_.class_patches.setdefault(key, {})[target.attr.value] = fact
                return
            instance = self.run_.instance(receiver) if type(receiver) is SelfFact else None
            setter = class_members.property_setter(self.run_, instance, target.attr.value) if instance else None
            if setter is not None:  # `self.widths = widths` of a property with a setter: the setter runs
                self.run_._invoke(setter, [fact], {}, target)
                return
        super().assign(target, fact, value_node)
        self.run_.parameters.tie(self.evaluator, target, value_node)  # `a.weight = b.weight`

    def _annotated_assign(self, node) -> None:
        """`self.W_U: Float[Tensor, "d_model d_vocab"] = nn.Parameter(...)`: the annotation's fact
        replaces the value's, and carries its gradient."""
        frames = self.run_.grad_frames
        frames.append(None)
        try:
            super()._annotated_assign(node)
        finally:
            tainted = frames.pop()
        if not (tainted and self.run_.mode == "training"):
            for name in python_values.target_names(node.target):
                self.env.pop(GRAD_TAINT + name, None)
            return
        for name in python_values.target_names(node.target):
            self.env[GRAD_TAINT + name] = tainted
        if expressions.is_plain(node.target):
            self.run_.mark(self.evaluator.eval(node.target), tainted)

    def _unpack(self, target, fact, value_node) -> None:
        """`y, *rest = pair` and `_, x = pair` from a known sequence; anything else as before."""
        if type(fact) is ModuleList and fact.count is None:
            fact = SequenceFact(fact.items)  # `for attn, ff in self.layers`: a pair of modules per layer
        elements = target.elements
        starred = [i for i, e in enumerate(elements) if isinstance(e, cst.StarredElement)]
        if len(starred) == 1 and type(fact) is SequenceFact and len(fact.items) >= len(elements) - 1:
            star = starred[0]
            tail = len(elements) - star - 1
            items = fact.items
            for element, item in zip(elements[:star], items[:star]):
                self.assign(element.value, item, None)
            self.assign(elements[star].value, SequenceFact(items[star:len(items) - tail]), None)
            for element, item in zip(elements[star + 1:], items[len(items) - tail:]):
                self.assign(element.value, item, None)
            return
        super()._unpack(target, fact, value_node)

    def _augmented_value(self, node) -> None:
        binary = _BITWISE_ASSIGN.get(type(node.operator))
        if binary is None:
            return super()._augmented_assign(node)
        left, right = self.evaluator.eval(node.target), self.evaluator.eval(node.value)
        self.assign(node.target, self.evaluator.arithmetic(binary(), left, right), None)  # `flag |= other`


_BITWISE_ASSIGN = {cst.BitOrAssign: cst.BitOr, cst.BitAndAssign: cst.BitAnd, cst.BitXorAssign: cst.BitXor,
                   cst.ModuloAssign: cst.Modulo}
