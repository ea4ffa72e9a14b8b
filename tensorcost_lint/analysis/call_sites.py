"""Recognising matmul / einsum / attention calls and recording them as CallSites.

A site is recorded whether or not its operands are known: `sites` in the JSON report lists every
call found, with the reason when it could not be costed.
"""

from __future__ import annotations

import libcst as cst

from shape_annotations import ShapeError, Unknown, einops_einsum_axes

from . import site_shapes
from .context import CallSite
from .evaluator import int_value
from .facts import DTypeFact, SequenceFact, StringFact, TensorFact
from .site_registry import ACCUMULATION_KEYWORDS, FUNCTIONS, METHODS, OPERATOR_SPEC

def _new_site(evaluator, node, spec, framework: str, function: str, operands: tuple) -> CallSite:
    ctx = evaluator.ctx
    site = CallSite(spec.operation, framework, function, operands, node=node, ctx=ctx, spec=spec)
    if ctx.autocast is not None and framework == "torch":
        site.options["autocast"] = ctx.autocast
    ctx.sites.append(site)
    return site


def strip_parentheses(text: str) -> str:
    """`(q @ k.T)` → `q @ k.T`, only where the outer parentheses enclose the whole expression."""
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for index, char in enumerate(text):
            depth += char == "("
            depth -= char == ")"
            if depth == 0 and index < len(text) - 1:
                return text
        text = text[1:-1].strip()
    return text


def _framework_of(operands, ctx) -> str:
    for operand in operands:
        if type(operand) is TensorFact and operand.framework:
            return operand.framework
    return ctx.primary_framework


def _apply_accumulation(evaluator, site: CallSite, args) -> None:
    """Accumulation/output dtype as the code states it: keyword arguments, then file-wide flags."""
    for keyword in ACCUMULATION_KEYWORDS:
        node = args.keywords.get(keyword) if args is not None else None
        if node is None:
            continue
        fact = evaluator.eval(node)
        if type(fact) is DTypeFact:
            site.accumulation_dtype = site.output_dtype = fact.dtype
            site.accumulation_source = f"{keyword}={evaluator.ctx.code(node)}"
            return
    flags = evaluator.ctx.flags
    if site.framework != "torch" or site.operation == "attention":
        return
    if flags.tf32:
        site.options["tf32"] = flags.tf32
    dtypes = {op.dtype for op in site.operands if type(op) is TensorFact}
    if flags.fp16_accumulation and dtypes == {"float16"}:
        site.accumulation_dtype, site.accumulation_source = "float16", flags.fp16_accumulation
    elif flags.bf16_reduced_reduction and dtypes == {"bfloat16"}:
        site.accumulation_dtype, site.accumulation_source = "bfloat16", flags.bf16_reduced_reduction


def _output_fact(site: CallSite) -> TensorFact | None:
    shapes = site.shapes
    operands = [op for op in site.operands if type(op) is TensorFact]
    dtypes = {op.dtype for op in operands}
    dtype = site.output_dtype or (dtypes.pop() if len(dtypes) == 1 else None)
    framework = site.framework if site.framework in ("torch", "numpy", "jax") else None
    if shapes is None or shapes.output_shape is None:
        return TensorFact(None, dtype, framework=framework) if operands else None
    return TensorFact(tuple(shapes.output_shape), dtype, framework=framework)


def _model(evaluator, site: CallSite, literal: dict | None = None) -> None:
    operands = site.operands
    if any(type(op) is not TensorFact for op in operands):
        missing = [str(i) for i, op in enumerate(operands) if type(op) is not TensorFact]
        site.unresolved = f"operand {', '.join(missing)} has no known shape (annotate it or add a shape comment)"
        return
    if any(op.shape is None for op in operands):
        missing = [str(i) for i, op in enumerate(operands) if op.shape is None]
        site.unresolved = f"operand {', '.join(missing)} has an unknown rank"
        return
    shapes = [tuple(op.shape) for op in operands]
    site.shapes = site_shapes.SHAPE_MODELS[site.spec.model](
        site.spec, shapes, evaluator.ctx.sizes, literal or {}, evaluator.ctx.strict_broadcast)
    if site.shapes is not None and site.shapes.undecided:
        what, a, b = site.shapes.undecided[0]
        from shape_annotations import render_dim

        site.unresolved = (f"cannot tell whether {what} {render_dim(a)} equals {render_dim(b)}; "
                           "declare their sizes (config dims or a `# tensorcost: dims` pragma)")


def _chain_part(ctx, node, fact):
    """(tree, leaves, texts) of one side of an `@`: a recorded chain, or one leaf."""
    recorded = ctx.chains.get(id(node))
    return recorded if recorded is not None else (0, [fact], [strip_parentheses(ctx.code(node))])


def _shift(tree, by: int):
    return tree + by if type(tree) is int else (_shift(tree[0], by), _shift(tree[1], by))


def _record_chain(ctx, node, lhs, rhs, site) -> None:
    """`a @ b @ c` is `(a @ b) @ c` as Python evaluates it: keep the tree as written, so TCL403 can
    compare its cost with the best order of the same chain."""
    left_tree, left_leaves, left_texts = _chain_part(ctx, node.left, lhs)
    right_tree, right_leaves, right_texts = _chain_part(ctx, node.right, rhs)
    chain = ((left_tree, _shift(right_tree, len(left_leaves))), left_leaves + right_leaves, left_texts + right_texts)
    ctx.chains[id(node)] = chain
    if len(chain[1]) >= 3:
        site.options["chain"] = chain


def record_matmul_operator(evaluator, node: cst.BinaryOperation):
    lhs, rhs = evaluator.eval(node.left), evaluator.eval(node.right)
    operands = (lhs, rhs)
    site = _new_site(evaluator, node, OPERATOR_SPEC, _framework_of(operands, evaluator.ctx), "@", operands)
    _record_chain(evaluator.ctx, node, lhs, rhs, site)
    _apply_accumulation(evaluator, site, None)
    _model(evaluator, site)
    return _output_fact(site)


def record_method_site(evaluator, node: cst.Call, receiver: TensorFact, method: str, args):
    other = evaluator.eval(args.get(0))
    for value in [*args.positional[1:], *args.keywords.values()]:
        evaluator.eval(value)
    operands = (receiver, other)
    framework = _framework_of(operands, evaluator.ctx)
    site = _new_site(evaluator, node, METHODS[method], framework,
                     f"Tensor.{method}" if framework == "torch" else f"ndarray.{method}", operands)
    _apply_accumulation(evaluator, site, args)
    _model(evaluator, site)
    return _output_fact(site)


def record_linear_module(evaluator, node: cst.Call, module, args):
    x = evaluator.eval(args.get(0, "input"))
    in_dim = module.in_dim
    if in_dim is None:  # nn.LazyLinear(out) takes its in_features from the first input it sees
        in_dim = x.shape[-1] if type(x) is TensorFact and x.shape else Unknown("in_features")
    weight = TensorFact((module.out_dim, in_dim), module.dtype or (x.dtype if type(x) is TensorFact else None),
                        framework="torch")
    spec = module.spec
    site = _new_site(evaluator, node, spec, "torch", spec.label or spec.name, (x, weight))
    _apply_accumulation(evaluator, site, None)
    _model(evaluator, site)
    return _output_fact(site)


def _literal_options(evaluator, args) -> dict:
    options = {}
    node = args.keywords.get("optimize")
    if node is not None:
        if isinstance(node, cst.Name) and node.value in ("True", "False"):
            options["optimize"] = node.value == "True"
        else:
            fact = evaluator.eval(node)
            options["optimize"] = fact.value if type(fact) is StringFact else "unknown"
    for keyword in ("is_causal", "enable_gqa"):
        node = args.keywords.get(keyword)
        if isinstance(node, cst.Name) and node.value in ("True", "False"):
            options[keyword] = node.value == "True"
    return options


def record_function_site(evaluator, node: cst.Call, name: str, args):
    spec = FUNCTIONS[name]
    framework = spec.framework
    options = _literal_options(evaluator, args)
    literal = {}
    if spec.model == "einsum":
        operands, subscripts = _einsum_operands(evaluator, args)
        if subscripts is not None:
            options["subscripts"] = subscripts
            literal["subscripts"] = subscripts
    elif spec.model == "einops":
        operands, pattern = _einops_operands(evaluator, args)
        if pattern is not None:
            options["subscripts"] = pattern
            try:
                axes, output = einops_einsum_axes(pattern, len(operands))
                literal.update(axes=axes, output=output, pattern=pattern)
            except ShapeError as error:
                site = _new_site(evaluator, node, spec, framework, name, operands)
                site.unresolved = f"einops pattern {pattern!r} cannot be parsed: {error.message}"
                evaluator.ctx.diagnose("TCL001", node, f"cannot parse einops pattern: {error.message}")
                return None
    else:
        keywords = spec.keywords
        nodes = [args.get(p, keywords[i] if i < len(keywords) else None) for i, p in enumerate(spec.operands)]
        operands = tuple(evaluator.eval(n) if n is not None else None for n in nodes)
        used = set(nodes)
        accumulation = [args.keywords.get(k) for k in ACCUMULATION_KEYWORDS]
        for value in [*args.positional, *args.keywords.values()]:
            if value not in used and value not in accumulation:
                evaluator.eval(value)
        if spec.model == "dot_general":
            numbers = _dimension_numbers(args.get(2, "dimension_numbers"))
            if numbers is not None:
                literal["contracting"], literal["batch"] = numbers
    site = _new_site(evaluator, node, spec, framework, name, tuple(operands))
    site.options = options
    _apply_accumulation(evaluator, site, args)
    if spec.model == "einsum" and "subscripts" not in literal:
        site.unresolved = "einsum subscripts are not a string literal"
    elif spec.model == "einops" and "axes" not in literal:
        site.unresolved = "einops pattern is not a string literal"
    elif spec.model == "dot_general" and "contracting" not in literal:
        site.unresolved = "dot_general dimension_numbers are not literal"
    else:
        _model(evaluator, site, literal)
    return _output_fact(site)


def _einsum_operands(evaluator, args):
    if not args.positional:
        return (), None
    first = evaluator.eval(args.positional[0])
    if type(first) is not StringFact:
        operands = tuple(evaluator.eval(v) for v in args.positional[1:])
        return operands, None
    rest = args.positional[1:]
    if len(rest) == 1 and isinstance(rest[0], (cst.List, cst.Tuple)):
        fact = evaluator.eval(rest[0])
        return (fact.items if type(fact) is SequenceFact else ()), first.value
    return tuple(evaluator.eval(v) for v in rest), first.value


def _einops_operands(evaluator, args):
    if not args.positional:
        return (), None
    *tensors, pattern_node = args.positional
    operands = tuple(evaluator.eval(v) for v in tensors)
    pattern = evaluator.eval(pattern_node)
    return operands, (pattern.value if type(pattern) is StringFact else None)


def _int_tuple(node):
    if not isinstance(node, (cst.Tuple, cst.List)):
        return None
    values = [int_value(e.value) for e in node.elements]
    return None if None in values else tuple(values)


def _dimension_numbers(node):
    """(((lhs_contract), (rhs_contract)), ((lhs_batch), (rhs_batch))) as literal tuples."""
    if not isinstance(node, (cst.Tuple, cst.List)) or len(node.elements) != 2:
        return None
    parts = []
    for element in node.elements:
        pair = element.value
        if not isinstance(pair, (cst.Tuple, cst.List)) or len(pair.elements) != 2:
            return None
        sides = tuple(_int_tuple(e.value) for e in pair.elements)
        if None in sides:
            return None
        parts.append(sides)
    return parts[0], parts[1]
