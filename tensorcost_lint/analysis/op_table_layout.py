"""The op table's entries for ops that lay out, copy or make storage: views and reshapes (torch's,
numpy's and jax's), dtype and device conversions, copies, joins, complex views, in-place fills,
constructors, new tensors from a receiver's metadata and metadata reads. op_table.py assembles them
with the other families; op_entry.py says what each field means."""

from __future__ import annotations

from . import complex_views, functional_ops, pointwise_ops, tensor_functions as function_rules, \
    tensor_methods as method_rules
from .op_entry import ALIAS, BY_COUNT, CONTIGUOUS, NN_FUNCTIONAL, NOTHING, PIECES, RESHAPE, SAME_IF_DTYPE, VIEW, Op, ops

_same = method_rules._same
_constructor = function_rules._constructor
_NUMPY_AND_JAX = ("numpy", "jax.numpy")

OPS: tuple[Op, ...] = (
    # views: the result shares the input's storage
    Op("transpose", torch=True, view=VIEW, saved=NOTHING, shape=method_rules._transpose),
    Op("swapaxes", torch=True, view=VIEW, saved=NOTHING, reads_as="transpose", shape=method_rules._transpose),
    Op("swapdims", torch=True, view=VIEW, reads_as="transpose", shape=method_rules._transpose),
    Op("t", torch=True, view=VIEW, saved=NOTHING, shape=method_rules._t),
    Op("permute", torch=True, view=VIEW, saved=NOTHING, shape=method_rules._permute),
    Op("unsqueeze", torch=True, view=VIEW, saved=NOTHING, shape=method_rules._unsqueeze),
    Op("squeeze", torch=True, view=VIEW, saved=NOTHING, shape=method_rules._squeeze),
    Op("expand", view=VIEW, saved=NOTHING, shape=method_rules._expand),
    Op("expand_as", view=VIEW, saved=NOTHING, shape=method_rules._like),
    Op("broadcast_to", torch=True, view=VIEW, shape=method_rules._broadcast_to),
    Op("view", view=RESHAPE, saved=NOTHING, shape=method_rules._view),
    Op("reshape", torch=True, view=RESHAPE, saved=NOTHING, shape=method_rules._view, torch_shape=function_rules._reshape),
    Op("flatten", torch=True, view=RESHAPE, saved=NOTHING, shape=method_rules._flatten),
    Op("view_as", view=RESHAPE, saved=NOTHING, shape=method_rules._like),
    Op("reshape_as", view=RESHAPE, saved=NOTHING, shape=method_rules._like),
    Op("unflatten", torch=True, view=RESHAPE, saved=NOTHING),
    Op("split", torch=True, view=PIECES, saved=NOTHING, shape=method_rules._split),
    Op("chunk", torch=True, view=PIECES, saved=NOTHING, shape=method_rules._chunk),
    Op("detach", torch=True, view=ALIAS, saved=NOTHING, cuts_gradient=True, shape=method_rules._same, torch_shape=None),
    Op("requires_grad_", view=ALIAS, shape=method_rules._same),
    Op("contiguous", view=CONTIGUOUS, saved=NOTHING, shape=method_rules._same),
    # numpy's and jax's functions of the same layouts (`np.transpose(a)` reverses the dims)
    *(Op(f"{module}.{name}", shape=rule) for module in _NUMPY_AND_JAX for name, rule in (
        ("swapaxes", function_rules._swapaxes), ("transpose", function_rules._numpy_transpose),
        ("reshape", function_rules._reshape), ("expand_dims", function_rules._expand_dims),
        ("shape", function_rules._size_of))),
    # dtype and device conversions
    Op("to", view=SAME_IF_DTYPE, saved=NOTHING, shape=method_rules._to),
    Op("type", view=SAME_IF_DTYPE, saved=NOTHING, shape=method_rules._type),
    Op("type_as", view=SAME_IF_DTYPE, saved=NOTHING, shape=method_rules._type_as),
    *(Op(name, view=SAME_IF_DTYPE, saved=NOTHING, shape=method_rules._dtype_method(name))
      for name in ("float", "half", "double", "bfloat16")),
    *ops("cpu cuda", view=SAME_IF_DTYPE, shape=method_rules._same),
    # integer, bool and complex conversions, numpy's and jax's `astype`: no view kind or saved rule
    # held against torch yet (a fresh storage, saved tensors not known)
    *(Op(name, shape=method_rules._dtype_method(name))
      for name in ("int", "long", "short", "bool", "char", "byte", "cfloat", "cdouble")),
    Op("astype", shape=method_rules._to),
    *ops("pin_memory block_until_ready", shape=_same),
    # copies and moves of elements: nothing kept for the backward
    Op("unbind", torch=True, saved=NOTHING, shape=method_rules._unbind),
    Op("clone", torch=True, saved=NOTHING, shape=method_rules._same),
    *ops("tril triu", torch=True, saved=NOTHING, shape=method_rules._same, torch_shape=function_rules.preserve),
    *(Op(f"{module}.{name}", shape=function_rules.preserve) for module in _NUMPY_AND_JAX for name in ("tril", "triu")),
    *ops("flip roll", torch=True, saved=NOTHING, shape=pointwise_ops.same),
    *ops("fliplr flipud", torch=True, shape=pointwise_ops.same),
    Op("narrow", torch=True, saved=NOTHING, shape=pointwise_ops._narrow),
    Op("movedim", torch=True, saved=NOTHING, shape=pointwise_ops._movedim),
    Op("moveaxis", torch=True, shape=pointwise_ops._movedim),
    Op("select", torch=True, shape=pointwise_ops._select),
    Op("rot90", torch=True, shape=pointwise_ops._rot90),
    Op("ravel", torch=True, shape=pointwise_ops._ravel),
    Op("tile", torch=True, shape=pointwise_ops._tile),
    Op("repeat", saved=NOTHING, shape=method_rules._repeat),
    Op("repeat_interleave", torch=True, saved=BY_COUNT, shape=method_rules._repeat_interleave),
    Op(NN_FUNCTIONAL + "pad", saved=NOTHING, shape=functional_ops._pad),
    *(Op(f"torch.atleast_{rank}d", shape=functional_ops._at_least(rank)) for rank in (1, 2, 3)),
    Op("torch.meshgrid", shape=functional_ops._meshgrid("ij")),
    *(Op(f"{module}.meshgrid", shape=functional_ops._meshgrid("xy")) for module in _NUMPY_AND_JAX),
    # `torch.permute_copy(x, dims)` is `x.permute(dims)` in new storage: the view's rule, input first
    *(Op(f"torch.{view}_copy", shape=view) for view in ("expand", "permute", "view", "squeeze", "unsqueeze",
                                                         "transpose", "t", "unbind", "narrow")),
    Op("torch.alias_copy", shape="clone"),
    Op("torch.split_with_sizes_copy", shape="split"),
    # joins
    *(Op(f"torch.{name}", saved=NOTHING, shape=function_rules._join("cat")) for name in ("cat", "concat", "concatenate")),
    Op("torch.stack", saved=NOTHING, shape=function_rules._join("stack")),
    *(Op(f"{module}.{name}", shape=function_rules._join(kind)) for module in _NUMPY_AND_JAX
      for name, kind in (("concatenate", "cat"), ("stack", "stack"))),
    # complex numbers as (real, imaginary) pairs, and from polar coordinates
    Op("torch.view_as_complex", saved=NOTHING, shape=complex_views._view_as_complex),
    Op("torch.view_as_real", saved=NOTHING, shape=complex_views._view_as_real),
    Op("torch.polar", shape=complex_views._polar),
    # in-place fills and copies: the receiver, its shape and dtype
    *ops("zero_ fill_ normal_ uniform_ copy_", shape=_same),
    # constructors: a new tensor from sizes, values or another tensor's shape, outside the autograd graph
    # (torch and jax make float32 by default, numpy float64; torch takes sizes as separate arguments,
    # numpy a tuple); `torch.normal` of a tensor mean is differentiable
    *(Op(f"{module}.{name}", constructor=True, cuts_gradient=True,
         shape=_constructor(framework, like=name.endswith("_like"), fill=name == "full"))
      for framework, module in (("torch", "torch"), ("numpy", "numpy"), ("jax", "jax.numpy"))
      for name in ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
                   # random constructors live in torch itself, in numpy.random and jax.random (below)
                   *(("randn", "rand", "randn_like", "rand_like") if framework == "torch" else ()))),
    *(Op(f"numpy.random.{name}", constructor=True, cuts_gradient=True, shape=_constructor("numpy", varargs=True))
      for name in ("randn", "rand")),
    *ops("jax.random.normal jax.random.uniform", shape=function_rules._jax_random),
    Op("torch.normal", constructor=True, shape=function_rules._normal),
    *(Op(f"{module}.{name}", constructor=True, cuts_gradient=True, shape=functional_ops._spaced(framework))
      for framework, module in (("torch", "torch"), ("numpy", "numpy"), ("jax", "jax.numpy"))
      for name in ("linspace", "logspace")),
    # their shapes are read from their values by the whole-model run (library/torch_values.py, run/call_dispatch.py)
    *ops("torch.arange torch.tensor torch.as_tensor", constructor=True, cuts_gradient=True),
    # a new tensor from the receiver's metadata: outside the autograd graph
    *ops("new_zeros new_ones new_empty", cuts_gradient=True, shape=method_rules._new_tensor(False)),
    Op("new_full", cuts_gradient=True, shape=method_rules._new_tensor(True)),
    Op("new_tensor", cuts_gradient=True),
    # metadata reads
    Op("size", metadata=True, shape=method_rules.size),
    Op("dim", metadata=True, shape=method_rules._rank),
    Op("numel", metadata=True, shape=method_rules._numel),
    Op("get_device", metadata=True),
    Op("item", shape=method_rules._dim_count),  # a number whose value the analysis does not read
)
