"""`nn.Unfold` and `F.unfold` (im2col): [N, C, H, W] (or [C, H, W]) to [N, C*kh*kw, L], L the number
of sliding windows, each spatial count as a convolution's output size (convolutions.output_spatial).
Module and function take the same arguments after the input: kernel_size, dilation, padding,
stride. FlopCounterMode counts no FLOPs for it: only the shape flows on (pit's and T2T's patch
embeddings). Checked against torch's OpInfo and ModuleInfo samples in tests/conformance."""

from __future__ import annotations

from shape_annotations import BinOp, Const, simplify_dim

from .convolutions import ConvOptions, output_spatial, per_axis
from .facts import ModuleFact, TensorFact

KIND = "unfold"
_ORDER = ("kernel_size", "dilation", "padding", "stride")
_DEFAULTS = {"dilation": 1, "padding": 0, "stride": 1}


def _options(interp, args, first: int) -> ConvOptions | None:
    def arg(name):
        return args.get(first + _ORDER.index(name), name)

    read = {name: per_axis(interp, arg(name), 2, _DEFAULTS.get(name, 1)) for name in _ORDER}
    for value in args.positional[first + len(_ORDER):]:
        interp.eval(value)
    if arg("kernel_size") is None or None in read.values():
        return None
    return ConvOptions(read["kernel_size"], read["stride"], read["padding"], read["dilation"], Const(1))


def module_fact(interp, args) -> ModuleFact:
    """`nn.Unfold(kernel_size=4, stride=2)`: a ModuleFact of kind "unfold"."""
    return ModuleFact(KIND, options=(_options(interp, args, 0),))


def unfolded(module: ModuleFact, x, sizes):
    """The output of an unfold module on `x`."""
    if type(x) is not TensorFact:
        return None
    options = module.options[0]
    if options is None or x.shape is None or len(x.shape) not in (3, 4):
        return x.with_shape(None)
    out = output_spatial(options, tuple(x.shape[-2:]), sizes)
    if out is None:
        return x.with_shape(None)
    channels = simplify_dim(BinOp("*", x.shape[-3], BinOp("*", options.kernel[0], options.kernel[1])))
    windows = simplify_dim(BinOp("*", out[0], out[1]))
    return x.with_shape((*x.shape[:-3], channels, windows))


def functional(interp, args):
    """`F.unfold(input, kernel_size, dilation=1, padding=0, stride=1)`."""
    node = args.get(0, "input")
    x = interp.eval(node) if node is not None else None
    return unfolded(ModuleFact(KIND, options=(_options(interp, args, 1),)), x, interp.ctx.settings.sizes)
