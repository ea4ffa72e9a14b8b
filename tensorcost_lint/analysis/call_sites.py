"""Recognising matmul / einsum / attention calls and recording them as CallSites.

A site is recorded whether or not its operands are known: `sites` in the JSON report lists every
call found, with the reason when it could not be costed. Each function takes the interpreter
(`interp`: `eval(node)`, `ctx`, `autocast`) as an argument, so this floor never imports the evaluator.
"""

from __future__ import annotations

import libcst as cst

from shape_annotations import Const, ShapeError, Unknown, einops_einsum_axes, floordiv_dims, render_dim

from . import convolutions, site_shapes
from .call_site import AttentionOptions, CallSite, EinsumOptions, MatmulChain, Precision, SourceSpan, strip_parentheses
from .facts import DTypeFact, SequenceFact, StringFact, TensorFact, operand_framework
from .interpreter import Interpreter
from .literals import bool_value, int_tuple
from .problems import Unparseable
from .site_registry import ACCUMULATION_KEYWORDS, FUNCTIONS, METHODS, OPERATOR_SPEC


def _framework_of(operands, ctx) -> str:
    return operand_framework(operands) or ctx.settings.primary_framework


def _precision(interp, spec, framework: str, operands, args) -> Precision:
    """Accumulation/output dtype as the code states it: keyword arguments, then file-wide flags;
    and the dtype of an enclosing autocast block, for every torch form alike."""
    ctx = interp.ctx
    autocast = interp.autocast if framework == "torch" else None
    for keyword in ACCUMULATION_KEYWORDS:
        node = args.keywords.get(keyword) if args is not None else None
        if node is None:
            continue
        fact = interp.eval(node)
        if type(fact) is DTypeFact and fact.dtype is not None:
            return Precision(fact.dtype, f"{keyword}={ctx.code(node)}", fact.dtype, autocast)
    flags = ctx.settings.flags
    if framework != "torch" or spec.operation == "attention":
        return _plain(autocast, None)
    dtypes = {op.dtype for op in operands if type(op) is TensorFact}
    if flags.fp16_accumulation and dtypes == {"float16"}:
        return Precision("float16", flags.fp16_accumulation, None, autocast, flags.tf32)
    if flags.bf16_reduced_reduction and dtypes == {"bfloat16"}:
        return Precision("bfloat16", flags.bf16_reduced_reduction, None, autocast, flags.tf32)
    return _plain(autocast, flags.tf32)


_PLAIN: dict = {}  # (autocast dtype, tf32 flag text) -> its Precision: one record, not one per site


def _plain(autocast, tf32) -> Precision:
    found = _PLAIN.get((autocast, tf32))
    if found is None:
        found = Precision(autocast=autocast, tf32=tf32)
        if len(_PLAIN) < 64:  # a flag's text names its line: a few per file
            _PLAIN[(autocast, tf32)] = found
    return found


def _shapes(interp, node, spec, operands, literal: dict) -> tuple[str | None, object]:
    """(why the site cannot be modelled, or None; its SiteShapes)."""
    if any(type(op) is not TensorFact for op in operands):
        missing = [str(i) for i, op in enumerate(operands) if type(op) is not TensorFact]
        return f"operand {', '.join(missing)} has no known shape (annotate it or add a shape comment)", None
    if any(op.shape is None for op in operands):
        missing = [str(i) for i, op in enumerate(operands) if op.shape is None]
        return f"operand {', '.join(missing)} has an unknown rank", None
    shapes = [tuple(op.shape) for op in operands]
    ctx = interp.ctx
    model = _modelled(ctx, spec, shapes, literal)
    if model.undecided and interp.unify_dims(node, model.undecided):  # the sizes a running program must have
        model = site_shapes.SHAPE_MODELS[spec.model](spec, shapes, ctx.settings.sizes, literal,
                                                     ctx.settings.strict_broadcast)
    if model.undecided:
        what, a, b = model.undecided[0]
        return (f"cannot tell whether {what} {render_dim(a)} equals {render_dim(b)}; "
                "declare their sizes (config dims or a `# tensorcost: dims` pragma)"), model
    return None, model


def _modelled(ctx, spec, shapes: list, literal: dict):
    """The site's SiteShapes (a pure function of its arguments and the sizes), shared by the sites
    of a unit alike in all of them (a generated forward of 100,000 `h = self.lin(h)`) while no size
    is added; one with undecided dims is modelled each time (unifying them changes the sizes)."""
    settings = ctx.settings
    sizes = settings.sizes
    try:
        key = (spec, tuple(shapes), tuple(literal.items()), settings.strict_broadcast)
        found = ctx.shape_models.get(key)
    except TypeError:  # a literal that is not hashable (a list of dimension numbers): modelled alone
        key = found = None
    if found is not None and found[0] == len(sizes):
        return found[1]
    model = site_shapes.SHAPE_MODELS[spec.model](spec, shapes, sizes, literal, settings.strict_broadcast)
    if key is not None and not model.undecided:
        ctx.shape_models[key] = (len(sizes), model)
    return model


def _record(interp, node, spec, framework: str, function: str, operands: tuple, args=None, *, literal=None,
            unresolved: str | None = None, precision: Precision | None = None, **options) -> CallSite:
    """Build the site once, from everything read about the call, and record it."""
    if precision is None:
        precision = _precision(interp, spec, framework, operands, args)
    shapes = None
    if unresolved is None:
        unresolved, shapes = _shapes(interp, node, spec, operands, literal or {})
    ctx = interp.ctx
    site = CallSite(spec, framework, function, operands, shapes, precision, unresolved=unresolved,
                    span=SourceSpan(ctx, node), **options)
    ctx.recorder.site(site)
    return site


def _output_fact(site: CallSite) -> TensorFact | None:
    shapes = site.shapes
    operands = [op for op in site.operands if type(op) is TensorFact]
    dtypes = {op.dtype for op in operands}
    dtype = site.output_dtype or (dtypes.pop() if len(dtypes) == 1 else None)
    framework = site.framework if site.framework in ("torch", "numpy", "jax") else None
    if shapes is None or shapes.output_shape is None:
        return TensorFact(None, dtype, framework=framework) if operands else None
    return TensorFact(tuple(shapes.output_shape), dtype, framework=framework)


def _chain_part(ctx, node, fact) -> MatmulChain:
    """One side of an `@`: a recorded chain, or one leaf."""
    recorded = ctx.chains.get(id(node))
    return recorded if recorded is not None else MatmulChain(0, (fact,), (strip_parentheses(ctx.code(node)),))


def _shift(tree, by: int):
    return tree + by if type(tree) is int else (_shift(tree[0], by), _shift(tree[1], by))


def _chain(ctx, node, lhs, rhs) -> MatmulChain | None:
    """`a @ b @ c` is `(a @ b) @ c` as Python evaluates it: keep the tree as written, so costing can
    compare its cost with the best order of the same chain."""
    left, right = _chain_part(ctx, node.left, lhs), _chain_part(ctx, node.right, rhs)
    chain = MatmulChain((left.tree, _shift(right.tree, len(left.leaves))), left.leaves + right.leaves,
                        left.texts + right.texts)
    ctx.chains[id(node)] = chain
    return chain if len(chain.leaves) >= 3 else None


def record_matmul_operator(interp: Interpreter, node: cst.BinaryOperation):
    lhs, rhs = interp.eval(node.left), interp.eval(node.right)
    operands = (lhs, rhs)
    chain = _chain(interp.ctx, node, lhs, rhs)
    site = _record(interp, node, OPERATOR_SPEC, _framework_of(operands, interp.ctx), "@", operands, chain=chain)
    return _output_fact(site)


def record_method_site(interp: Interpreter, node: cst.Call, receiver: TensorFact, method: str, args):
    spec = METHODS[method]
    keywords = dict(zip(spec.operands, spec.keywords))
    nodes = [None if p == 0 else args.get(p - 1, keywords.get(p)) for p in spec.operands]
    operands = tuple(receiver if p == 0 else interp.eval(n) if n is not None else None
                     for p, n in zip(spec.operands, nodes))
    for value in [*args.positional, *args.keywords.values()]:
        if value not in nodes:
            interp.eval(value)
    framework = _framework_of(operands, interp.ctx)
    function = f"Tensor.{method}" if framework == "torch" else f"ndarray.{method}"
    return _output_fact(_record(interp, node, METHODS[method], framework, function, operands, args))


def record_linear_module(interp: Interpreter, node: cst.Call, module, args):
    x = interp.eval(args.get(0, "input"))
    in_dim = module.in_dim
    if in_dim is None:  # nn.LazyLinear(out) takes its in_features from the first input it sees
        in_dim = x.shape[-1] if type(x) is TensorFact and x.shape else Unknown("in_features")
    weight = TensorFact((module.out_dim, in_dim), module.dtype or (x.dtype if type(x) is TensorFact else None),
                        framework="torch")
    spec = module.spec
    return _output_fact(_record(interp, node, spec, "torch", spec.label or spec.name, (x, weight)))


def record_convolution(interp: Interpreter, node: cst.Call, module, args):
    """A convolution module called on a batched input [N, C, *spatial], recorded as its im2col
    contraction (analysis/convolutions.py); the output is [N, out_channels, *output spatial]."""
    x = interp.eval(args.get(0, "input"))
    for value in [*args.positional[1:], *args.keywords.values()]:
        interp.eval(value)
    options, spec = module.options, module.spec
    rank = len(options.kernel) if options.kernel is not None else convolutions.spatial_rank(spec)
    dtype = module.dtype or (x.dtype if type(x) is TensorFact else None)
    in_channels = module.in_dim or Unknown("in_channels")
    per_group = in_channels if options.groups is None else floordiv_dims(in_channels, options.groups)
    # the input the kernel runs on (the weight is the module's parameter): what its backward keeps
    arguments = () if options.pads_a_copy else (x, None)
    return _convolution(interp, node, spec, x, (module.out_dim or Unknown("out_channels"), per_group),
                        options, rank, dtype, args, arguments=arguments)


def record_functional_convolution(interp: Interpreter, node: cst.Call, spec, args):
    """`F.conv1d(x, weight, bias, stride, padding, dilation, groups)` with the weight given as
    [out, in // groups, *kernel], costed as the module of the same rank."""
    x, weight = interp.eval(args.get(0, "input")), interp.eval(args.get(1, "weight"))
    rank = convolutions.spatial_rank(spec)
    for key, value in [*((None, v) for v in args.positional[2:3]), *args.keywords.items()]:
        if key not in convolutions.FUNCTIONAL_HYPER:
            interp.eval(value)  # the bias, which FlopCounterMode does not count apart
    known = type(weight) is TensorFact and weight.shape is not None and len(weight.shape) == rank + 2
    kernel = tuple(weight.shape[2:]) if known else (Unknown("kernel_size"),) * rank
    options = convolutions.functional_options(interp, args, kernel)
    dtype = x.dtype if type(x) is TensorFact else None
    channels = tuple(weight.shape[:2]) if known else (Unknown("out_channels"), Unknown("in_channels"))
    return _convolution(interp, node, spec, x, channels, options, rank, dtype, args,
                        None if known else "the weight has no known shape [out, in // groups, *kernel]",
                        arguments=(x, weight))


def _convolution(interp, node, spec, x, channels, options, rank, dtype, args, reason=None, arguments=()):
    """The site of one convolution of x [N, C, *spatial] by a weight [out, in // groups, *kernel];
    its output [N, out, *output spatial]. `channels`: (out, in // groups)."""
    out_channels, per_group = channels
    kernel, groups = options.kernel or (Unknown("kernel_size"),) * rank, options.groups
    view, spatial, weight, literal = x, None, (out_channels, per_group) + tuple(kernel), {}
    if reason is None and type(x) is TensorFact and x.shape is not None:
        spatial = convolutions.output_spatial(options, x.shape[-rank:], interp.ctx.settings.sizes) if len(x.shape) == rank + 2 else None
        if len(x.shape) != rank + 2:
            reason = f"input of rank {len(x.shape)}: a batched [N, C, {rank} spatial] input is modelled"
        elif spatial is None:
            reason = "kernel_size, stride, padding or dilation is not a literal or a dim"
        elif groups is None:
            reason = "groups is not a literal or a dim"
        elif groups == Const(1):
            view = TensorFact(tuple(x.shape[:2]) + spatial + tuple(kernel), dtype, framework="torch")
        else:
            literal["subscripts"] = convolutions.grouped(spec)
            view = TensorFact((x.shape[0], groups, floordiv_dims(x.shape[1], groups)) + spatial + tuple(kernel),
                              dtype, framework="torch")
            weight = (groups, floordiv_dims(out_channels, groups), per_group) + tuple(kernel)
    site = _record(interp, node, spec, "torch", spec.label or spec.name, (view, TensorFact(weight, dtype, framework="torch")),
                   args, literal=literal, unresolved=reason, arguments=arguments)
    if reason is not None or type(x) is not TensorFact:
        return TensorFact(None, dtype, framework="torch") if type(x) is TensorFact else None
    out = _output_fact(site)
    if groups != Const(1) and out.shape is not None:
        out = out.with_shape((x.shape[0], out_channels) + spatial)  # [N, groups, out // groups] read whole
    return out


def _optimize(interp, args):
    node = args.keywords.get("optimize")
    if node is None:
        return None
    literal = bool_value(node)
    if literal is not None:
        return literal
    fact = interp.eval(node)
    return fact.value if type(fact) is StringFact else "unknown"


def record_function_site(interp: Interpreter, node: cst.Call, name: str, args):
    spec = FUNCTIONS[name]
    if spec.operation == "convolution":
        return record_functional_convolution(interp, node, spec, args)
    framework = spec.framework
    literal, options = {}, {}
    config_text = None
    if spec.model in ("einsum", "einops"):
        optimize = _optimize(interp, args)
        if spec.model == "einsum":
            operands, subscripts = _einsum_operands(interp, args)
        else:
            operands, subscripts = _einops_operands(interp, args)
        if isinstance(subscripts, StringFact):  # read from a config file: neither used nor shown
            config_text, subscripts = subscripts, None
        if spec.model == "einsum":
            if subscripts is not None:
                literal["subscripts"] = subscripts
        else:
            if subscripts is not None:
                try:
                    axes, output = einops_einsum_axes(subscripts, len(operands))
                    literal.update(axes=axes, output=output, pattern=subscripts)
                except ShapeError as error:
                    _record(interp, node, spec, framework, name, operands, precision=Precision(),
                            unresolved=f"einops pattern {subscripts!r} cannot be parsed: {error.message}",
                            einsum=EinsumOptions(subscripts, optimize))
                    interp.ctx.report(Unparseable("einops pattern", error.message), node)
                    return None
        options["einsum"] = EinsumOptions(subscripts, optimize)
    else:
        keywords = spec.keywords
        nodes = [args.get(p, keywords[i] if i < len(keywords) else None) for i, p in enumerate(spec.operands)]
        operands = tuple(interp.eval(n) if n is not None else None for n in nodes)
        used = set(nodes)
        accumulation = [args.keywords.get(k) for k in ACCUMULATION_KEYWORDS]
        for value in [*args.positional, *args.keywords.values()]:
            if value not in used and value not in accumulation:
                interp.eval(value)
        if spec.model == "dot_general":
            numbers = _dimension_numbers(args.get(2, "dimension_numbers"))
            if numbers is not None:
                literal["contracting"], literal["batch"] = numbers
        if spec.model == "attention":
            options["attention"] = AttentionOptions(spec.layout, bool_value(args.keywords.get("is_causal")),
                                                    bool_value(args.keywords.get("enable_gqa")))
    unresolved = None
    if config_text is not None:
        # a config file's string may be a secret; a message names its field and size, never its text
        unresolved = (f"{'einsum subscripts' if spec.model == 'einsum' else 'einops pattern'} read from "
                      f"{config_text.origin} ({len(config_text.value)} characters) are not shown or used; "
                      "write them in the code")
    elif spec.model == "einsum" and "subscripts" not in literal:
        unresolved = "einsum subscripts are not a string literal"
    elif spec.model == "einops" and "axes" not in literal:
        unresolved = "einops pattern is not a string literal"
    elif spec.model == "dot_general" and "contracting" not in literal:
        unresolved = "dot_general dimension_numbers are not literal"
    site = _record(interp, node, spec, framework, name, tuple(operands), args, literal=literal,
                   unresolved=unresolved, **options)
    return _output_fact(site)


def _einsum_operands(interp, args):
    if not args.positional:
        return (), None
    first = interp.eval(args.positional[0])
    if type(first) is not StringFact:
        operands = tuple(interp.eval(v) for v in args.positional[1:])
        return operands, None
    rest = args.positional[1:]
    if len(rest) == 1 and isinstance(rest[0], (cst.List, cst.Tuple)):
        fact = interp.eval(rest[0])
        return (fact.items if type(fact) is SequenceFact else ()), _subscripts(first)
    return tuple(interp.eval(v) for v in rest), _subscripts(first)


def _subscripts(fact: StringFact):
    """The text of literal subscripts; the fact itself when they come from a config file."""
    return fact if fact.origin is not None else fact.value


def _einops_operands(interp, args):
    if not args.positional:
        return (), None
    *tensors, pattern_node = args.positional
    operands = tuple(interp.eval(v) for v in tensors)
    pattern = interp.eval(pattern_node)
    return operands, (_subscripts(pattern) if type(pattern) is StringFact else None)


def _dimension_numbers(node):
    """(((lhs_contract), (rhs_contract)), ((lhs_batch), (rhs_batch))) as literal tuples."""
    if not isinstance(node, (cst.Tuple, cst.List)) or len(node.elements) != 2:
        return None
    parts = []
    for element in node.elements:
        pair = element.value
        if not isinstance(pair, (cst.Tuple, cst.List)) or len(pair.elements) != 2:
            return None
        sides = tuple(int_tuple(e.value) for e in pair.elements)
        if None in sides:
            return None
        parts.append(sides)
    return parts[0], parts[1]
