"""`nn.MultiheadAttention`: its constructor read as torch reads it, and a call recorded as the
contractions torch's `F.multi_head_attention_forward` runs, each a call site at the call:

- the input projections, `linear(query, W_q)`, `linear(key, W_k)`, `linear(value, W_v)` (one packed
  `linear` of 3·E outputs when query, key and value are one tensor: the same FLOPs);
- with `need_weights` (the default), the scores `bmm(q, kᵀ)` and `bmm(weights, v)` over batch × heads;
  without, one fused `scaled_dot_product_attention` (costed as that site is everywhere);
- the output projection `linear(attn, out_proj.weight)`.

The fast path torch takes in inference (`torch._native_multi_head_attention`) runs the same
arithmetic in one kernel, so its FLOPs are these too. `add_bias_kv` and `add_zero_attn` each make
the source one longer. The result is `(attn_output, attn_weights)`: the output shaped like the
query with E channels; the weights [N, L, S] averaged over heads (or [N, H, L, S]), None without
`need_weights`. What the call cannot read (a non-literal switch) is one unresolved site naming it,
so a total is never silently short of the module's cost."""

from __future__ import annotations

from dataclasses import dataclass

from shape_annotations import BinOp, Const, ShapeError, floordiv_dims, simplify_dim

from . import call_sites
from .call_site import AttentionOptions
from .facts import DTypeFact, ModuleFact, SequenceFact, TensorFact
from .literals import bool_value
from .site_registry import FUNCTIONS

KIND = "multihead_attention"
_LINEAR, _BMM = FUNCTIONS["torch.nn.functional.linear"], FUNCTIONS["torch.bmm"]
_FUSED = FUNCTIONS["torch.nn.functional.scaled_dot_product_attention"]
_LABEL = "nn.MultiheadAttention"
# the constructor's parameters in order (torch 2.x)
_PARAMETERS = ("embed_dim", "num_heads", "dropout", "bias", "add_bias_kv", "add_zero_attn", "kdim", "vdim",
               "batch_first", "device", "dtype")
# the call's parameters in order
_CALL = ("query", "key", "value", "key_padding_mask", "need_weights", "attn_mask", "average_attn_weights",
         "is_causal")


@dataclass(frozen=True)
class Options:
    heads: object  # DimExpr or None
    kdim: object  # DimExpr (embed_dim when not given) or None
    vdim: object
    bias: bool | None  # literal switches; None: not readable
    bias_kv: bool | None
    zero_attn: bool | None
    batch_first: bool | None


def _switch(node, default: bool) -> bool | None:
    return default if node is None else bool_value(node)


def module_fact(interp, args) -> ModuleFact:
    """`nn.MultiheadAttention(embed_dim, num_heads, ...)`: a ModuleFact of kind "multihead_attention"
    whose in_dim and out_dim are embed_dim."""
    def arg(name):
        return args.get(_PARAMETERS.index(name), name)

    embed = interp.dim_of(arg("embed_dim"))
    kdim_node, vdim_node = arg("kdim"), arg("vdim")
    options = Options(interp.dim_of(arg("num_heads")),
                      embed if kdim_node is None or getattr(kdim_node, "value", None) == "None" else interp.dim_of(kdim_node),
                      embed if vdim_node is None or getattr(vdim_node, "value", None) == "None" else interp.dim_of(vdim_node),
                      _switch(arg("bias"), True), _switch(arg("add_bias_kv"), False),
                      _switch(arg("add_zero_attn"), False), _switch(arg("batch_first"), False))
    dtype_node = arg("dtype")
    dtype_fact = interp.eval(dtype_node) if dtype_node is not None else None
    read = {"embed_dim", "num_heads", "kdim", "vdim", "bias", "add_bias_kv", "add_zero_attn", "batch_first", "dtype"}
    for index, value in enumerate(args.positional):
        if index >= len(_PARAMETERS) or _PARAMETERS[index] not in read:
            interp.eval(value)
    for key, value in args.keywords.items():
        if key not in read:
            interp.eval(value)
    return ModuleFact(KIND, embed, embed, dtype_fact.dtype if type(dtype_fact) is DTypeFact else None, None, options)


def packed(options: Options, embed) -> bool | None:
    """torch's `_qkv_same_embed_dim`: kdim and vdim equal to embed_dim (one in_proj_weight)."""
    if options.kdim is None or options.vdim is None or embed is None:
        return None
    return simplify_dim(options.kdim) == simplify_dim(embed) and simplify_dim(options.vdim) == simplify_dim(embed)


def parameters(module: ModuleFact) -> tuple | str:
    """(name, shape) of each parameter torch allocates, or why they are not known."""
    options, embed = module.options, module.in_dim
    same = packed(options, embed)
    if embed is None or same is None or options.bias is None or options.bias_kv is None:
        return "nn.MultiheadAttention: its embed_dim, kdim, vdim or bias switches are not known"
    three = simplify_dim(BinOp("*", Const(3), embed))
    held = [("in_proj_weight", (three, embed))] if same else [
        ("q_proj_weight", (embed, embed)), ("k_proj_weight", (embed, options.kdim)),
        ("v_proj_weight", (embed, options.vdim))]
    if options.bias:
        held.append(("in_proj_bias", (three,)))
    held.append(("out_proj.weight", (embed, embed)))
    if options.bias:
        held.append(("out_proj.bias", (embed,)))
    if options.bias_kv:
        held += [("bias_k", (Const(1), Const(1), embed)), ("bias_v", (Const(1), Const(1), embed))]
    return tuple(held)


def call(interp, node, module: ModuleFact, args):
    """The call's sites, recorded in torch's order, and its (attn_output, attn_weights)."""
    nodes = {name: args.get(index, name) for index, name in enumerate(_CALL)}
    facts = {name: interp.eval(n) if n is not None else None for name, n in nodes.items()}
    for value in [*args.positional[len(_CALL):], *(v for k, v in args.keywords.items() if k not in _CALL)]:
        interp.eval(value)
    query, key, value = facts["query"], facts["key"], facts["value"]
    options, embed = module.options, module.in_dim
    need_weights = _switch(nodes["need_weights"], True)
    average = _switch(nodes["average_attn_weights"], True)
    why = _unreadable(options, embed, need_weights, average, (query, key, value))
    if why is not None:
        weight = interp.module_parameter(module, "out_proj.weight", (embed or Const(1), embed or Const(1)),
                                         module.dtype)
        call_sites._record(interp, node, _LINEAR, "torch", _LABEL, (query, weight), unresolved=why)
        return None
    batched = len(query.shape) == 3
    first = options.batch_first and batched

    def parts(fact):  # (batch dims, length, channels) of a [N, L, E], [L, N, E] or [L, E] input
        shape = tuple(fact.shape)
        if not batched:
            return (), shape[0], shape[1]
        return ((shape[0],), shape[1], shape[2]) if first else ((shape[1],), shape[0], shape[2])

    batch, length, _ = parts(query)
    _, source, _ = parts(key)
    source = simplify_dim(BinOp("+", source, Const(int(options.bias_kv) + int(options.zero_attn)))) \
        if options.bias_kv or options.zero_attn else source
    try:
        head = floordiv_dims(embed, options.heads)
    except ShapeError as error:
        call_sites._record(interp, node, _LINEAR, "torch", _LABEL, (query, None),
                           unresolved=f"nn.MultiheadAttention: embed_dim over num_heads: {error.message}")
        return None
    dtype = query.dtype or module.dtype
    with interp.module_scope(module):
        out = _record_sites(interp, node, module, (query, key, value), (batch, length, source, head), dtype,
                            need_weights, nodes["is_causal"])
    if type(out) is TensorFact and out.shape is not None and batched and not first:
        out = _made(interp, (length, batch[0], embed), out.dtype, (out,))  # torch's [L, N, E] from [N, L, E]
    weights = None
    if need_weights:
        per_head = (length, source) if average else (options.heads, length, source)
        weights = TensorFact((*batch, *per_head), dtype, framework="torch")
    return SequenceFact((out, weights))


def _record_sites(interp, node, module, inputs, sizes, dtype, need_weights, is_causal):
    """The projections, the attention and the output projection as sites; the attended output."""
    options, embed = module.options, module.in_dim
    batch, length, source, head = sizes
    same = packed(options, embed)
    projected = []
    for fact, name, width in zip(inputs, ("q_proj_weight", "k_proj_weight", "v_proj_weight"),
                                 (embed, options.kdim, options.vdim)):
        weight = interp.module_parameter(module, "in_proj_weight" if same else name, (embed, width), module.dtype)
        call_sites._record(interp, node, _LINEAR, "torch", _LABEL, (fact, weight))
        projected.append((fact, weight))
    rows = simplify_dim(BinOp("*", batch[0], options.heads)) if batch else options.heads
    q, k_t, v = (_made(interp, shape, dtype, sources) for shape, sources in zip(
        ((rows, length, head), (rows, head, source), (rows, source, head)), projected))
    if need_weights:
        scores = call_sites._output_fact(call_sites._record(interp, node, _BMM, "torch", _LABEL, (q, k_t)))
        interp.derived(scores, (q, k_t))
        mixed = call_sites._output_fact(call_sites._record(interp, node, _BMM, "torch", _LABEL, (scores, v)))
        interp.derived(mixed, (scores, v))
    else:
        split = (*batch, options.heads)
        heads = tuple(_made(interp, (*split, n, head), dtype, (fact,)) for n, fact in
                      zip((length, source, source), (q, k_t, v)))
        call_sites._record(interp, node, _FUSED, "torch", _LABEL, heads, attention=_attention_options(is_causal))
        mixed = heads
    attended = _made(interp, (*batch, length, embed), dtype, mixed if type(mixed) is tuple else (mixed,))
    weight = interp.module_parameter(module, "out_proj.weight", (embed, embed), module.dtype)
    out = call_sites._output_fact(call_sites._record(interp, node, _LINEAR, "torch", _LABEL, (attended, weight)))
    interp.derived(out, (attended, weight))
    return out


def _made(interp, shape, dtype, sources) -> TensorFact:
    fact = TensorFact(shape, dtype, framework="torch")
    interp.derived(fact, tuple(s for s in sources if type(s) is TensorFact))
    return fact


def _attention_options(is_causal):
    return AttentionOptions(_FUSED.layout, bool_value(is_causal) if is_causal is not None else None)


def _unreadable(options: Options, embed, need_weights, average, inputs) -> str | None:
    if any(type(fact) is not TensorFact or fact.shape is None for fact in inputs):
        return "nn.MultiheadAttention: query, key or value has no known shape"
    ranks = {len(fact.shape) for fact in inputs}
    if len(ranks) != 1 or ranks.pop() not in (2, 3):
        return "nn.MultiheadAttention: query, key and value must all be batched (3-D) or unbatched (2-D)"
    if embed is None or options.heads is None or options.kdim is None or options.vdim is None:
        return "nn.MultiheadAttention: embed_dim, num_heads, kdim or vdim is not known"
    if None in (need_weights, average, options.batch_first, options.bias_kv, options.zero_attn):
        return ("nn.MultiheadAttention: need_weights, average_attn_weights, batch_first, add_bias_kv or "
                "add_zero_attn is not a literal True/False")
    return None
