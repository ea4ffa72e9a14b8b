"""Module-level torch functions with no Tensor method of the same meaning: `F.pad`, `F.glu`,
`F.adaptive_avg_pool2d`, `torch.atleast_2d`, `torch.outer`, `torch.histc`. Each takes (interp,
CallArgs); checked against torch's OpInfo samples in tests/conformance. (The `*_copy` forms of views,
`torch.permute_copy` as `permute` into new storage, are entries of op_table_layout.py.)"""

from __future__ import annotations

import libcst as cst

from shape_annotations import BinOp, Const, simplify_dim

from . import shape_ops
from .arguments import CallArgs
from .facts import DimFact, DTypeFact, IntFact, ModuleFact, SequenceFact, TensorFact
from .literals import int_value
from . import module_shapes


def _input(interp, args, keyword="input"):
    node = args.get(0, keyword)
    fact = interp.eval(node) if node is not None else None
    for value in [*args.positional[1:], *(v for k, v in args.keywords.items() if k != keyword)]:
        interp.eval(value)
    return fact


def _pad(interp, args):
    """`F.pad(x, (left, right, top, bottom...), mode, value)`: the last len(pad)/2 dims grow. The
    amounts may be ints or dims, written out or held in a name (`pad_shape = (0, 0, 0, pad_size)`)."""
    node = args.get(1, "pad")
    fact = _input(interp, CallArgs([args.get(0, "input")], {}, False))
    amounts = _pad_amounts(interp, node) if node is not None else None
    for value in [*args.positional[2:], *(v for k, v in args.keywords.items() if k not in ("input", "pad"))]:
        interp.eval(value)
    if type(fact) is not TensorFact or fact.shape is None or amounts is None or None in amounts \
            or len(amounts) % 2 or len(amounts) // 2 > len(fact.shape):
        return fact.with_shape(None) if type(fact) is TensorFact else None
    shape = list(fact.shape)
    for index in range(len(amounts) // 2):
        shape[-1 - index] = _grown(_grown(shape[-1 - index], amounts[2 * index]), amounts[2 * index + 1])
    return fact.with_shape(tuple(shape))


def _pad_amounts(interp, node) -> list | None:
    """Each amount an int or a dim, None where unknown; None when the sequence is not known."""
    elements = getattr(node, "elements", None)
    if elements is not None:
        amounts, counted = [], True
        for element in elements:
            if isinstance(element, cst.StarredElement):  # `(*zeros, *pad)`: each spliced item, in order
                spliced = interp.eval(element.value)
                counted = counted and type(spliced) is SequenceFact  # else how many it holds is unknown
                amounts.extend(_amount(item) for item in getattr(spliced, "items", ()))
            else:
                literal = int_value(element.value)
                amounts.append(_amount(interp.eval(element.value)) if literal is None else literal)
        return amounts if counted else None
    fact = interp.eval(node)
    if type(fact) is not SequenceFact:
        return None
    return [_amount(item) for item in fact.items]


def _amount(fact):
    if type(fact) is IntFact:
        return fact.value
    return fact.dim if type(fact) is DimFact else None


def _grown(dim, amount):
    if type(amount) is int:
        if amount == 0:
            return dim
        return simplify_dim(BinOp("+", dim, Const(amount)) if amount > 0 else BinOp("-", dim, Const(-amount)))
    return simplify_dim(BinOp("+", dim, amount))


def _adaptive_pool(rank: int, maximum: bool):
    """`F.adaptive_avg_pool2d(x, output_size)`, as the module of the same name."""

    def transfer(interp, args):
        node = args.get(0, "input")
        fact = interp.eval(node) if node is not None else None
        rest = {id(value): interp.eval(value) for value in
                [*args.positional[1:], *(v for k, v in args.keywords.items() if k != "input")]}
        indices = args.get(2, "return_indices") if maximum else None
        output_size = args.get(1, "output_size")  # `self.output_size`: a computed size read from its value
        sizes = module_shapes.adaptive_sizes(output_size, rank, rest.get(id(output_size)))
        if indices is not None and getattr(indices, "value", None) not in ("True", "False"):
            sizes = None
        with_indices = indices is not None and getattr(indices, "value", None) == "True"
        return module_shapes.call(ModuleFact("adaptive_pool", options=(rank, sizes, with_indices)), fact)

    return transfer


def _glu(interp, args):
    """`F.glu(x, dim=-1)`: the dim halved (it must be even)."""
    fact = _input(interp, args)
    dim_node = args.get(1, "dim")
    dim = -1 if dim_node is None else int_value(dim_node)
    if type(fact) is not TensorFact or fact.shape is None or dim is None:
        return fact.with_shape(None) if type(fact) is TensorFact else None
    position = shape_ops.axis(dim, len(fact.shape))
    length = None if position is None else fact.shape[position]
    if type(length) is not Const or length.value % 2:
        return fact.with_shape(None)
    return fact.with_shape(tuple(fact.shape[:position]) + (Const(length.value // 2),) + tuple(fact.shape[position + 1:]))


def _at_least(rank: int):
    """`torch.atleast_2d(x)`: 1s added as torch places them ([n] is [1, n]; for 3-d, [n] is
    [1, n, 1] and [m, n] is [m, n, 1])."""
    layouts = {1: {0: "1"}, 2: {0: "11", 1: "1x"}, 3: {0: "111", 1: "1x1", 2: "xx1"}}[rank]

    def transfer(interp, args):
        fact = _input(interp, args)
        if type(fact) is not TensorFact or fact.shape is None:
            return fact.with_shape(None) if type(fact) is TensorFact else None
        layout = layouts.get(len(fact.shape))
        if layout is None:
            return fact.with_shape(fact.shape)
        dims = iter(fact.shape)
        return fact.with_shape(tuple(Const(1) if c == "1" else next(dims) for c in layout))

    return transfer


def _outer(interp, args):
    """`torch.outer(a, b)`: [n] and [m] give [n, m]."""
    a, b = interp.eval(args.get(0, "input")), interp.eval(args.get(1, "vec2"))
    if type(a) is not TensorFact or type(b) is not TensorFact:
        return None
    dtype = a.dtype if a.dtype == b.dtype else None
    if a.shape is None or b.shape is None or len(a.shape) != 1 or len(b.shape) != 1:
        return TensorFact(None, dtype, framework=a.framework)
    return TensorFact((a.shape[0], b.shape[0]), dtype, framework=a.framework)


def _histc(interp, args):
    """`torch.histc(x, bins=100, min=0, max=0)`: a 1-D histogram of `bins` counts, in x's (floating) dtype."""
    fact = _input(interp, args)
    bins_node = args.get(1, "bins")
    bins = Const(100) if bins_node is None else interp.dim_of(bins_node)
    if type(fact) is not TensorFact:
        return None
    return TensorFact(None if bins is None else (bins,), fact.dtype, framework=fact.framework)


def _meshgrid(default_indexing: str):
    """`torch.meshgrid(a, b, indexing="ij")` (or one list of tensors): one tensor per input, each of
    shape (len(a), len(b), ...); "xy" indexing swaps the first two sizes. A 0-d input counts as one
    item, as torch flattens each input. torch's default is "ij", numpy's and jax's "xy"."""

    def transfer(interp, args):
        indexing_node = args.keywords.get("indexing")
        indexing = interp.eval(indexing_node) if indexing_node is not None else None
        indexing = default_indexing if indexing_node is None else getattr(indexing, "value", None)
        if set(args.keywords) - {"indexing"} or args.starred or indexing not in ("ij", "xy"):
            return None  # numpy's `sparse=True` gives broadcastable shapes instead
        facts = [interp.eval(node) for node in args.positional]
        if len(facts) == 1 and type(facts[0]) is not TensorFact:  # `torch.meshgrid([a, b])`
            facts = list(interp.listed_items(facts[0]) or [None])
        if not facts or any(type(f) is not TensorFact or f.shape is None or len(f.shape) > 1 for f in facts):
            return None
        sizes = [f.shape[0] if f.shape else Const(1) for f in facts]
        if indexing == "xy" and len(sizes) > 1:
            sizes[0], sizes[1] = sizes[1], sizes[0]
        return SequenceFact(tuple(TensorFact(tuple(sizes), f.dtype, framework=f.framework) for f in facts), kind="tuple")

    return transfer


def _spaced(framework: str):
    """`torch.linspace(start, end, steps)` / `logspace(start, end, steps, base)`: a 1-d tensor of
    `steps` values, of the default float dtype unless `dtype=` says (numpy/jax: steps defaults to 50,
    dtype float64/float32)."""
    default_dtype = {"torch": "float32", "numpy": "float64", "jax": "float32"}[framework]

    def transfer(interp, args):
        steps = args.get(2, "steps" if framework == "torch" else "num")
        for key, value in args.keywords.items():
            if key not in ("steps", "num", "dtype"):
                interp.eval(value)
        for value in [*args.positional[:2], *args.positional[3:]]:
            interp.eval(value)
        dtype = args.keywords.get("dtype")
        dtype_fact = interp.eval(dtype) if dtype is not None else None
        if steps is None and framework != "torch":
            size = Const(50)
        else:
            size = interp.dim_of(steps) if steps is not None else None
        if args.starred or dtype is not None and type(dtype_fact) is not DTypeFact \
                or framework == "numpy" and any(k in args.keywords for k in ("retstep", "endpoint")):
            return None  # numpy's `retstep=True` returns a pair; `endpoint` is read as written only
        return TensorFact(None if size is None else (size,),
                          dtype_fact.dtype if dtype is not None else default_dtype, framework=framework)

    return transfer
