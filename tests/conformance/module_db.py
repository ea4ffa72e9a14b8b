"""Conformance of the module rules with torch's ModuleInfo database
(`torch.testing._internal.common_modules.module_db`).

Each sample is a constructor call and a forward call. The constructor is written as source
(`torch.nn.Conv2d(3, 4, 2, stride=2)`) and evaluated by our Evaluator to a module fact; the call
`m(t0)` is evaluated with `m` bound to it. Python runs the same text on torch and the outcomes are
read as for ops (op_db.py): a constructor or call our rules do not model is unknown.
"""

from __future__ import annotations

from .op_db import AGREE, DISAGREE, SKIPPED, UNKNOWN, Tally, Unwritable, compare, dtype_name, evaluator, fact_of, literal
from tensorcost_lint.analysis import module_shapes
from tensorcost_lint.analysis.calls import SHAPE_PRESERVING_MODULES
from tensorcost_lint.analysis.facts import ModuleFact
from tensorcost_lint.analysis.site_registry import MODULE_CLASSES

SAMPLES = 4  # the first samples each ModuleInfo yields, in its fixed order


def module_sources(cls_name: str, sample, tensors: dict) -> tuple[str, str]:
    """(`torch.nn.NAME(...)`, `m(...)`) for one ModuleInput; tensors are bound in `tensors`."""
    build, call = sample.constructor_input, sample.forward_input
    made = [literal(a, tensors) for a in build.args] + [f"{k}={literal(v, tensors)}" for k, v in build.kwargs.items()]
    fed = [literal(a, tensors) for a in call.args] + [f"{k}={literal(v, tensors)}" for k, v in call.kwargs.items()]
    return f"torch.nn.{cls_name}({', '.join(made)})", f"m({', '.join(fed)})"


def _ours(constructor: str, call: str, tensors: dict):
    facts = {name: fact_of(t) for name, t in tensors.items()}
    interp, module = evaluator(dict(facts), HEADER + constructor + "\n")
    built = interp.eval(module.body[-1].body[0].value)
    if type(built) is not ModuleFact:
        return None  # a module our rules do not build: unknown
    interp, module = evaluator({**facts, "m": built}, HEADER + call + "\n")
    return interp.eval(module.body[-1].body[0].value)


def _theirs(constructor: str, call: str, tensors: dict):
    import torch

    scope = {"torch": torch, **tensors}
    scope["m"] = eval(constructor, scope)  # noqa: S307 - the sample's own constructor arguments
    with torch.no_grad():
        return eval(call, scope)  # noqa: S307


def check_module(cls_name: str, sample) -> tuple[str, str]:
    tensors: dict = {}
    try:
        constructor, call = module_sources(cls_name, sample, tensors)
    except Unwritable:
        return SKIPPED, ""
    try:
        result = _theirs(constructor, call, tensors)
    except Exception:  # noqa: BLE001 - a sample torch rejects as written does not apply
        return SKIPPED, ""
    try:
        fact = _ours(constructor, call, tensors)
    except Exception as error:  # noqa: BLE001 - an internal error of ours is a failure
        return DISAGREE, f"{constructor} {call}: raised {type(error).__name__}: {error}"
    outcome, detail = compare(fact, result)
    if not detail:
        return outcome, ""
    operands = ", ".join(f"{n}: {list(t.shape)} {dtype_name(t.dtype)}" for n, t in tensors.items())
    return outcome, f"{constructor} {call} ({operands}): {detail}"


def run_module(info) -> Tally:
    import torch

    cls_name = info.module_cls.__name__
    if cls_name not in MODULE_CLASSES and cls_name not in SHAPE_PRESERVING_MODULES \
            and not module_shapes.modelled(cls_name):
        return Tally(cls_name, base=cls_name)  # no rule builds it: not mapped, nothing to run
    tally = Tally(cls_name, (("module", f"torch.nn.{cls_name}"),), base=cls_name)
    torch.manual_seed(0)
    try:
        samples = info.module_inputs_func(info, device="cpu", dtype=torch.float32, requires_grad=False, training=False)
    except Exception:  # noqa: BLE001 - a ModuleInfo that cannot build samples on CPU here
        samples = []
    for sample in samples[:SAMPLES]:
        tally.add(*check_module(cls_name, sample))
    return tally


def module_tallies() -> list:
    from torch.testing._internal.common_modules import module_db

    return [run_module(info) for info in module_db]


HEADER = "import torch\n"
__all__ = ["AGREE", "DISAGREE", "SKIPPED", "UNKNOWN", "module_tallies", "run_module"]
