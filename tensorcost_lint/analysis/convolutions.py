"""`nn.Conv1d/2d/3d` modules: their hyper-parameters as dims, and the output shape torch documents.

A convolution is costed as its im2col contraction (site_registry: `ncyxij,ocij->noyx` for 2-D): the
input viewed as [N, C, *output spatial, *kernel] against the weight [O, C, *kernel]. Its FLOPs are
exactly what FlopCounterMode counts (2 * N * O * C * prod(kernel) * prod(output spatial)); its
traffic reads that unfolded view, which equals the input for non-overlapping patch convolutions
(kernel == stride, no padding) and is an upper bound otherwise."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from shape_annotations import BinOp, Const, ShapeError, evaluate_dim, evaluate_integer, floordiv_dims, simplify_dim

from .facts import DTypeFact, IntFact, ModuleFact, SequenceFact, StringFact
from .literals import int_value

RANKS = {"Conv1d": 1, "Conv2d": 2, "Conv3d": 3}
_HYPER = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias",
          "padding_mode", "device", "dtype")


@dataclass(frozen=True, slots=True)
class ConvOptions:
    """Per spatial axis (None: not readable, e.g. `padding="same"`)."""

    kernel: tuple | None
    stride: tuple | None
    padding: tuple | None
    dilation: tuple | None
    groups: object  # DimExpr or None
    # nn.ConvNd with a padding_mode other than "zeros" (or one not read) pads its input into a copy
    # (`F.pad`) and convolves that: the tensor its backward keeps is the copy, not the input
    pads_a_copy: bool = False


def per_axis(interp, node, rank: int, default: int):
    if node is None:
        return (Const(default),) * rank
    value = int_value(node)
    if value is not None:
        return (Const(value),) * rank if value >= 0 else None
    if isinstance(node, (cst.Tuple, cst.List)) and len(node.elements) == rank:
        # `padding=(0, 1)`: a literal 0 per axis is read as written (a 0 is no dim elsewhere)
        values = [int_value(e.value) for e in node.elements]
        dims = [Const(v) if v is not None and v >= 0 else interp.dim_of(e.value) for v, e in zip(values, node.elements)]
        return None if None in dims else tuple(dims)
    fact = interp.eval(node)
    if type(fact) is SequenceFact and len(fact.items) == rank:
        dims = [_axis(item) for item in fact.items]
        return None if None in dims else tuple(dims)
    if type(fact) is IntFact:  # `padding=p` computed to 0 (`get_padding(1, 1)`): no dim, but known
        return (Const(fact.value),) * rank if fact.value >= 0 else None
    if type(fact) is StringFact:
        return None  # "same" / "valid"
    dim = interp.dim_of(node)
    return None if dim is None else (dim,) * rank


def _axis(item):
    """One axis's value of a computed tuple: a dim, or a known int 0 (a padding)."""
    if type(item) is IntFact:
        return Const(item.value) if item.value >= 0 else None
    return getattr(item, "dim", None)


def conv_module(interp, name: str, spec, args) -> ModuleFact:
    rank = RANKS[name.rsplit(".", 1)[-1]]
    for key, value in args.keywords.items():
        if key not in _HYPER:
            interp.eval(value)
    dtype_node = args.keywords.get("dtype")
    dtype_fact = interp.eval(dtype_node) if dtype_node is not None else None
    groups = args.get(6, "groups")
    options = ConvOptions(
        per_axis(interp, args.get(2, "kernel_size"), rank, 1), per_axis(interp, args.get(3, "stride"), rank, 1),
        per_axis(interp, args.get(4, "padding"), rank, 0), per_axis(interp, args.get(5, "dilation"), rank, 1),
        Const(1) if groups is None else interp.dim_of(groups), _pads_a_copy(args.get(8, "padding_mode")))
    return ModuleFact("conv", interp.dim_of(args.get(0, "in_channels")), interp.dim_of(args.get(1, "out_channels")),
                      dtype_fact.dtype if type(dtype_fact) is DTypeFact else None, spec, options)


def _pads_a_copy(node) -> bool:
    if node is None:
        return False
    return not (isinstance(node, cst.SimpleString) and node.evaluated_value == "zeros")


def functional_options(interp, args, kernel: tuple) -> ConvOptions:
    """`F.conv2d(input, weight, bias, stride, padding, dilation, groups)`: the kernel is the weight's
    trailing dims, the rest read as the module reads its own."""
    rank, groups = len(kernel), args.get(6, "groups")
    return ConvOptions(kernel, per_axis(interp, args.get(3, "stride"), rank, 1),
                       per_axis(interp, args.get(4, "padding"), rank, 0),
                       per_axis(interp, args.get(5, "dilation"), rank, 1),
                       Const(1) if groups is None else interp.dim_of(groups))


FUNCTIONAL_HYPER = ("input", "weight", "stride", "padding", "dilation", "groups")


def weight_shape(module: ModuleFact) -> tuple | None:
    """An nn.ConvNd's weight as torch allocates it: [out, in // groups, *kernel] (a depthwise
    convolution's is [C, 1, k], which `conv.weight.squeeze(1)` hands to a functional kernel)."""
    options = module.options
    if options is None or options.kernel is None or options.groups is None \
            or module.in_dim is None or module.out_dim is None:
        return None
    return (module.out_dim, floordiv_dims(module.in_dim, options.groups)) + tuple(options.kernel)


def spatial_rank(spec) -> int:
    """1, 2 or 3: the weight's subscripts (`oci` of 1-D) less its two channel axes."""
    return len(spec.subscripts.split(",")[1].split("->")[0]) - 2


def grouped(spec) -> str:
    """The im2col contraction of a convolution in groups: each group's output channels read only
    that group's input channels, so the group is a batch axis of both operands (1-D:
    `ngcyi,goci->ngoy`), 2 * N * O * (C / groups) * prod(kernel) * prod(output) FLOPs, as
    FlopCounterMode counts a grouped convolution's forward."""
    lhs, rest = spec.subscripts.split(",")
    rhs, out = rest.split("->")
    return f"{lhs[0]}g{lhs[1:]},g{rhs}->{out[0]}g{out[1:]}"


def weight_gradient_factor(site, sizes) -> int | None:
    """How many forwards FlopCounterMode counts for a convolution's weight gradient: its formula
    (conv_backward_flop) reads the input's whole channel count, so a grouped convolution's
    grad_weight counts `groups` forwards where the arithmetic is one; 1 when ungrouped, None
    when the group count is not a known number."""
    shapes = site.shapes
    if shapes is None or len(shapes.inputs) < 2 or "g" not in shapes.inputs[1]:
        return 1
    dim = shapes.dims.get("g")
    return None if dim is None else _size(dim, sizes)


def output_spatial(options: ConvOptions, spatial, sizes) -> tuple | None:
    """Each output size floor((L + 2p - d(k-1) - 1) / s) + 1, as torch documents it: a number when
    the sizes are declared (torch floors, as Python's `//` on the ints does), else the expression
    (whose `//` must then divide exactly)."""
    if None in (options.kernel, options.stride, options.padding, options.dilation):
        return None
    sizes_out = []
    for size, k, s, p, d in zip(spatial, options.kernel, options.stride, options.padding, options.dilation):
        # the program's ints, a padding of 0 included (a size would have to be >= 1)
        numbers = [evaluate_integer(dim, sizes) for dim in (size, k, s, p, d)]
        if None not in numbers:
            length, kernel, stride, padding, dilation = numbers
            out = (length + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1 if stride > 0 else 0
            if out < 1:
                return None
            sizes_out.append(Const(out))
        elif k == s and p == Const(0) and d == Const(1):
            sizes_out.append(simplify_dim(BinOp("//", size, k)))  # patches: (L - k) // k + 1 is L // k
        else:
            span = BinOp("-", BinOp("-", BinOp("+", size, BinOp("*", Const(2), p)),
                                    BinOp("*", d, BinOp("-", k, Const(1)))), Const(1))
            sizes_out.append(simplify_dim(BinOp("+", BinOp("//", span, s), Const(1))))
    return tuple(sizes_out)


def _size(dim, sizes):
    try:
        return evaluate_dim(dim, sizes)
    except ShapeError:
        return None
