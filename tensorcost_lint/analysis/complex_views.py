"""Complex numbers as torch models use them for rotary embeddings (`freqs_cis`): a float tensor
whose last dim holds (real, imaginary) viewed as complex and back, and `torch.polar`. Each takes
(interp, CallArgs); checked against torch's OpInfo samples in tests/conformance.

torch defines the views only for these pairs of dtypes (others raise), so an input of another
known dtype gives no result rather than a guessed one."""

from __future__ import annotations

from shape_annotations import Const

from . import shape_ops
from .facts import TensorFact

_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
_REAL_OF = {complex_: real for real, complex_ in _COMPLEX_OF.items()}
# float16 views as torch's complex32, a dtype the estimator has no entry for: its shape, dtype unknown
_VIEWED_AS_COMPLEX = {*_COMPLEX_OF, "float16"}


def _tensors(interp, args, keywords):
    """The facts of the named tensor arguments (None for a starred call: positions unknown)."""
    if args.starred:
        for value in [*args.positional, *args.keywords.values()]:
            interp.eval(value)
        return [None] * len(keywords)
    facts = [interp.eval(args.get(i, k)) if args.get(i, k) is not None else None for i, k in enumerate(keywords)]
    named = set(keywords)
    for value in [*args.positional[len(keywords):], *(v for k, v in args.keywords.items() if k not in named)]:
        interp.eval(value)
    return facts


def _view_as_complex(interp, args):
    """`[..., 2]` floats -> `[...]` complex (the last dim must be 2: a program that runs has it so)."""
    (fact,) = _tensors(interp, args, ("input",))
    if type(fact) is not TensorFact or fact.dtype is not None and fact.dtype not in _VIEWED_AS_COMPLEX:
        return None
    if fact.shape is None or not fact.shape or isinstance(fact.shape[-1], Const) and fact.shape[-1].value != 2:
        return fact.with_shape(None).with_dtype(_COMPLEX_OF.get(fact.dtype))
    return fact.with_shape(fact.shape[:-1]).with_dtype(_COMPLEX_OF.get(fact.dtype))


def _view_as_real(interp, args):
    """`[...]` complex -> `[..., 2]` floats (real, imaginary)."""
    (fact,) = _tensors(interp, args, ("input",))
    if type(fact) is not TensorFact or fact.dtype is not None and fact.dtype not in _REAL_OF:
        return None
    shape = None if fact.shape is None else (*fact.shape, Const(2))
    return fact.with_shape(shape).with_dtype(_REAL_OF.get(fact.dtype))


def _polar(interp, args):
    """`torch.polar(abs, angle)`: the broadcast shape, complex of the operands' (equal) float dtype."""
    magnitude, angle = _tensors(interp, args, ("abs", "angle"))
    if type(magnitude) is not TensorFact or type(angle) is not TensorFact:
        return None
    dtype = magnitude.dtype if magnitude.dtype == angle.dtype else None
    if dtype is not None and dtype not in ("float32", "float64"):
        return None
    shape = shape_ops.broadcast(magnitude.shape, angle.shape, interp.ctx.settings.sizes)
    return TensorFact(shape, _COMPLEX_OF.get(dtype), framework=magnitude.framework or angle.framework)
