"""Hypothesis strategies that write *model-like* Python: the code tensorcost exists to read.

hypothesmith's programs are valid Python but almost never contain a matmul whose operand shapes are
known, so they exercise the parser and little else. These strategies compose the idioms of real
model code (jaxtyping annotations, shape comments, pragmas, `x.size()` unpacking, view/transpose
chains, einsum subscripts, einops patterns, `nn.Linear` modules, autocast blocks, branches) over a
small pool of dim names, with sizes that are sometimes absurd (0, 2**63, 10**30) and subscripts or
ranks that are sometimes wrong, so that every stage of the pass — annotation parsing, propagation,
site shapes, costing, rules — sees both the common case and the edge.

Every program this module writes is valid Python (`compile()` accepts it); the tests assert that
such programs never produce TCL900 or E999. Also used by benchmarks/fuzz_lint.py.
"""

from __future__ import annotations

from hypothesis import strategies as st

# Dim names: some declared in DECLARED_DIMS, some declared nowhere, some unusual identifiers.
DECLARED_DIMS = {"batch": 4, "seq": 128, "d_model": 64, "heads": 4, "d_head": 16, "B": 2, "T": 32, "C": 48,
                 "nh": 4, "hs": 12, "d_ff": 256, "vocab": 1000}
SEQUENCE_DIMS = ("seq", "T")
UNDECLARED = ("n", "k", "m", "pos", "x1", "_", "Seq_Len", "é")
DIM_NAMES = tuple(DECLARED_DIMS) + UNDECLARED
# Sizes at the edges: the smallest, ordinary, the largest signed 64-bit count and past it.
SIZES = (1, 2, 3, 7, 64, 1024, 65536, 2**31, 2**62, 2**63 - 1, 2**63, 10**30)

IMPORT_STYLES = (
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nfrom torch import Tensor",
    "import torch as th\nfrom torch import nn, einsum, Tensor\nfrom torch.nn import functional as F\ntorch = th",
    "import numpy as np\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\nfrom jax import Array",
    "import einops\nfrom einops import rearrange, repeat, reduce\nimport torch\nfrom torch import Tensor",
    "import opt_einsum\nimport numpy as np\nimport torch\nfrom torch import Tensor",
)
JAXTYPING = "from jaxtyping import Float, BFloat16, Float16, Int8, Shaped, Int, Bool, Float32\n"
DTYPE_CLASSES = ("Float", "BFloat16", "Float16", "Int8", "Shaped", "Float32", "Int", "Bool")
ARRAY_TYPES = ("Tensor", "torch.Tensor", "Array", "np.ndarray", "jax.Array", "jnp.ndarray")
TORCH_DTYPES = ("torch.float16", "torch.bfloat16", "torch.float32", "torch.int8", "torch.float8_e4m3fn",
                "jnp.bfloat16", "jnp.float32", "np.float64", "None")

names = st.sampled_from(DIM_NAMES)
small_ints = st.integers(-6, 6)


@st.composite
def dim_token(draw) -> str:
    """One dim of a jaxtyping shape string: names, ints, variadics, anonymous dims, expressions."""
    kind = draw(st.integers(-12, 11))
    name = draw(names)
    if kind < 0:  # most dims in real code are plain declared names
        return draw(st.sampled_from(tuple(DECLARED_DIMS)))
    if kind <= 4:
        return name
    if kind == 5:
        return str(draw(st.sampled_from(SIZES + (0,))))
    if kind == 6:
        return draw(st.sampled_from(("*batch", "...", "_", "*", "#" + name, "*#b", "...")))
    if kind == 7:
        return f"{name}={draw(names)}" if draw(st.booleans()) else f"{name}={draw(st.sampled_from(SIZES))}"
    if kind == 8:
        op = draw(st.sampled_from(("+", "-", "*", "//", "%", "**")))
        other = draw(st.one_of(names, st.sampled_from(("1", "2", "0", str(2**63)))))
        return f"{name}{op}{other}"
    if kind == 9:
        return f"({name}*{draw(names)})"
    if kind == 10:
        return "_" + name
    return draw(st.sampled_from(("?", "[", "a b", "\\", "'", "1e3", "-1", "#", "*a*b", "…")))


@st.composite
def shape_string(draw, rank: int | None = None) -> str:
    count = draw(st.integers(0, 6) | st.integers(2, 4)) if rank is None else rank
    sep = draw(st.sampled_from((" ", " ", " ", ",", "  ")))
    return sep.join(draw(dim_token()) for _ in range(count))


def quoted(text: str) -> str:
    """A string literal that is always valid Python, whatever the text holds."""
    return repr(text)


@st.composite
def annotation(draw) -> str:
    kind = draw(st.integers(-6, 9))
    dtype = draw(st.sampled_from(DTYPE_CLASSES))
    array = draw(st.sampled_from(ARRAY_TYPES))
    shape = quoted(draw(shape_string()))
    if kind < 0:  # the common, well-formed case
        return f"{draw(st.sampled_from(('Float', 'BFloat16', 'Float16')))}[Tensor, {quoted(draw(shape_string(draw(st.integers(2, 4)))))}]"
    if kind <= 5:
        return f"{dtype}[{array}, {shape}]"
    if kind == 6:
        return f"Optional[{dtype}[{array}, {shape}]]"
    if kind == 7:
        return f"{dtype}[{array}, {shape}] | None"
    if kind == 8:  # a string forward reference holding the whole annotation
        return quoted(f"{dtype}[{array}, {shape}]")
    return draw(st.sampled_from(("Scores", "int", "torch.Tensor", "'Tensor'", f"TensorType[{shape}]",
                                 f"{dtype}[{array}]", f"{dtype}[{array}, {shape}, {shape}]")))


@st.composite
def shape_comment(draw) -> str:
    dims = draw(st.lists(st.one_of(names, st.sampled_from(("1", "3", "0", "-1", "..."))), max_size=6))
    kind = draw(st.integers(0, 6))
    body = ", ".join(dims)
    if kind == 0:
        return f"  # ({body})"
    if kind == 1:
        return f"  # [{body}]"
    if kind == 2:
        return f"  # shape: ({body})"
    if kind == 3:
        other = ", ".join(draw(st.lists(names, max_size=4)))
        return f"  # ({body}) x ({other}) -> ({body})"
    if kind == 4:  # prose that must never be read as a shape
        return draw(st.sampled_from(("  # (see the paper)", "  # [TODO] fix", "  # shape: who knows",
                                     "  # noqa", "  # noqa: TCL401", "  # (B, T, C) but not really",
                                     "  # shape: (", "  # ((((", "  # shape: (B, T, C, " + "x, " * 70 + ")")))
    if kind == 5:
        return f"  # shape: {draw(shape_string())}"
    return ""


@st.composite
def pragma(draw) -> str:
    bindings = draw(st.lists(st.tuples(names, st.sampled_from(SIZES + (0, -1))), max_size=4))
    text = " ".join(f"{n}={s}" for n, s in bindings)
    return draw(st.sampled_from((f"# tensorcost: dims {text}", f"#tensorcost: dims {text}",
                                 f"# tensorcost: dim {text}", f"# tensorcost: dims {text} # note",
                                 "# tensorcost: dims", f"# tensorcost: other {text}")))


def _subscripts(draw, ranks) -> str:
    letters = "bhijkqdlmn"
    operands = ["".join(draw(st.sampled_from(letters)) for _ in range(rank)) for rank in ranks]
    text = ",".join(operands)
    form = draw(st.integers(0, 4))
    if form == 0:
        return text
    if form == 1:
        out = "".join(draw(st.lists(st.sampled_from(letters), max_size=4, unique=True)))
        return f"{text}->{out}"
    if form == 2:
        return "..." + text.replace(",", ",...") + "->..."
    if form == 3:
        return text.replace(",", " , ") + " -> " + "".join(sorted(set(text.replace(",", ""))))[:3]
    return draw(st.sampled_from(("ij,jk", "bhqd,bhkd->bhqk", "ij,jk,kl->il", "ii->i", "i,i->", "->", "a,b,c,d->abcd",
                                 "ij->ji", "ij,,jk", "ZZ,zz", "bij,bjk->bik", "…")))


def _einsum_call(draw, a, b, c) -> str:
    library = draw(st.sampled_from(("torch.einsum", "np.einsum", "jnp.einsum", "opt_einsum.contract", "einsum")))
    operands = [a, b, c][:draw(st.integers(1, 3))]
    subscripts = quoted(_subscripts(draw, [draw(st.integers(1, 4)) for _ in operands]))
    extra = ""
    if library == "np.einsum":
        extra = ", optimize=" + draw(st.sampled_from(("True", "False", "'optimal'", "'greedy'")))
    elif library == "jnp.einsum":
        extra = ", preferred_element_type=" + draw(st.sampled_from(TORCH_DTYPES))
    return f"{library}({subscripts}, {', '.join(operands)}{extra})"


# Each entry writes one right-hand side from (draw, a, b, c, i, j); the first ones are the contractions
# the tool exists for, so they are listed (and therefore drawn) more than once.
_EXPRESSIONS = [
    lambda d, a, b, c, i, j: f"{a} @ {b}",
    lambda d, a, b, c, i, j: f"{a} @ {b}.transpose(-2, -1)",
    lambda d, a, b, c, i, j: f"torch.matmul({a}, {b})",
    lambda d, a, b, c, i, j: _einsum_call(d, a, b, c),
    lambda d, a, b, c, i, j: _einsum_call(d, a, b, c),
    lambda d, a, b, c, i, j: f"{a}.matmul({b})",
    lambda d, a, b, c, i, j: f"torch.bmm({a}, {b})",
    lambda d, a, b, c, i, j: f"torch.mm({a}, {b})",
    lambda d, a, b, c, i, j: f"torch.baddbmm({c}, {a}, {b})",
    lambda d, a, b, c, i, j: f"F.linear({a}, {b})",
    lambda d, a, b, c, i, j: f"np.dot({a}, {b})",
    lambda d, a, b, c, i, j: f"jnp.matmul({a}, {b}, preferred_element_type={d(st.sampled_from(TORCH_DTYPES))})",
    lambda d, a, b, c, i, j: f"lax.dot_general({a}, {b}, ((({i},), ({j},)), ((), ())))",
    lambda d, a, b, c, i, j: f"einops.einsum({a}, {b}, {quoted(d(shape_string(3)) + ', ' + d(shape_string(3)) + ' -> ' + d(shape_string(2)))})",
    lambda d, a, b, c, i, j: f"einops.rearrange({a}, {quoted(d(shape_string(3)) + ' -> ' + d(shape_string(3)))})",
    lambda d, a, b, c, i, j: f"rearrange({a}, 'b t (h d) -> b h t d', h={d(names)})",
    lambda d, a, b, c, i, j: f"repeat({a}, 'b t d -> b t r d', r={d(st.sampled_from(SIZES))})",
    lambda d, a, b, c, i, j: f"reduce({a}, 'b t d -> b d', 'mean')",
    lambda d, a, b, c, i, j: f"F.scaled_dot_product_attention({a}, {b}, {c}, is_causal=True)",
    lambda d, a, b, c, i, j: f"jax.nn.dot_product_attention({a}, {b}, {c})",
    lambda d, a, b, c, i, j: f"{a}.transpose({i}, {j})",
    lambda d, a, b, c, i, j: f"{a}.transpose(1, 2)",
    lambda d, a, b, c, i, j: f"{a}.permute({', '.join(str(d(small_ints)) for _ in range(d(st.integers(0, 5))))})",
    lambda d, a, b, c, i, j: f"{a}.view({', '.join(d(st.lists(st.sampled_from(VIEW_DIMS), max_size=5)))})",
    lambda d, a, b, c, i, j: f"{a}.reshape({d(names)}, -1)",
    lambda d, a, b, c, i, j: f"{a}.T",
    lambda d, a, b, c, i, j: f"{a}.mT",
    lambda d, a, b, c, i, j: f"{a}.swapaxes({i}, {j})",
    lambda d, a, b, c, i, j: f"{a}.unsqueeze({i})",
    lambda d, a, b, c, i, j: f"{a}.squeeze({i})",
    lambda d, a, b, c, i, j: f"{a}[None]",
    lambda d, a, b, c, i, j: f"{a}[:, {i}]",
    lambda d, a, b, c, i, j: f"{a}[..., None, :]",
    lambda d, a, b, c, i, j: f"{a}.expand({d(names)}, -1, -1)",
    lambda d, a, b, c, i, j: f"{a}.repeat(1, {i}, 1)",
    lambda d, a, b, c, i, j: f"F.softmax({a}, dim={i})",
    lambda d, a, b, c, i, j: f"torch.softmax({a} / math.sqrt({a}.size(-1)), dim=-1)",
    lambda d, a, b, c, i, j: f"{a} * {b} + {c}",
    lambda d, a, b, c, i, j: f"{a} + 1",
    lambda d, a, b, c, i, j: f"torch.cat([{a}, {b}], dim={i})",
    lambda d, a, b, c, i, j: f"torch.stack([{a}, {b}, {c}], dim={i})",
    lambda d, a, b, c, i, j: f"{a}.split({d(names)}, dim={i})",
    lambda d, a, b, c, i, j: f"{a}.sum(dim={i})",
    lambda d, a, b, c, i, j: f"{a}.mean({i}, keepdim=True)",
    lambda d, a, b, c, i, j: f"{a}.to({d(st.sampled_from(TORCH_DTYPES))})",
    lambda d, a, b, c, i, j: f"{a}.half()",
    lambda d, a, b, c, i, j: f"self.proj({a})",
    lambda d, a, b, c, i, j: f"self.w @ {a}",
    lambda d, a, b, c, i, j: f"{a}.masked_fill(mask == 0, float('-inf'))",
    lambda d, a, b, c, i, j: f"{a}.contiguous().view({d(names)}, {d(names)}, -1)",
    lambda d, a, b, c, i, j: f"torch.empty({d(names)}, {d(names)}, dtype={d(st.sampled_from(TORCH_DTYPES))})",
    lambda d, a, b, c, i, j: f"torch.zeros(({d(names)}, {d(st.sampled_from(SIZES))}))",
    lambda d, a, b, c, i, j: f"np.zeros(({d(st.sampled_from(SIZES))}, {d(st.sampled_from(SIZES))}))",
    lambda d, a, b, c, i, j: f"{a}.shape[{i}]",
    lambda d, a, b, c, i, j: f"{a}.size({i})",
    lambda d, a, b, c, i, j: f"({a} @ {b}) @ ({c} @ {a})",
    lambda d, a, b, c, i, j: f"{a} @ {b} @ {c}",
    lambda d, a, b, c, i, j: f"{a} if flag else {b}",
    lambda d, a, b, c, i, j: f"lambda t: t @ {b}",
    lambda d, a, b, c, i, j: f"[{a} @ {b} for _ in range(3)]",
    lambda d, a, b, c, i, j: f"{{'k': {a} @ {b}}}",
    lambda d, a, b, c, i, j: f"f{quoted('{' + a + '.shape}')}",
]
VIEW_DIMS = ("B", "T", "nh", "C // nh", "C // self.n_head", "-1", "-1", "0", "hs", "self.n_head", "2**70")


@st.composite
def expression(draw, variables: list[str]) -> str:
    """A right-hand side over variables already bound: the operations propagation models."""
    a, b, c = (draw(st.sampled_from(variables)) for _ in range(3))
    i, j = draw(small_ints), draw(small_ints)
    write = draw(st.sampled_from(_EXPRESSIONS))
    return write(draw, a, b, c, i, j)


@st.composite
def statements(draw, variables: list[str], indent: str, depth: int = 0) -> list[str]:
    """A block body. New names are appended to `variables` as they are bound."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.integers(0, 13))
        target = draw(st.sampled_from(("y", "z", "att", "q", "k", "v", "h", "out", "scores", "x")))
        if kind <= 6:
            lines.append(f"{indent}{target} = {draw(expression(variables))}{draw(shape_comment())}")
            variables.append(target)
        elif kind == 7:
            unpacked = ", ".join(draw(st.lists(st.sampled_from(("B", "T", "C", "nh", "hs", "_")), min_size=1,
                                               max_size=5)))
            lines.append(f"{indent}{unpacked}, = {draw(st.sampled_from(variables))}.size()")
        elif kind == 8:
            lines.append(f"{indent}{target}: {draw(annotation())} = {draw(expression(variables))}")
            variables.append(target)
        elif kind == 9 and depth < 3:
            lines.append(f"{indent}if {draw(st.sampled_from(('flag', 'self.training', 'x is None', 'True')))}:")
            lines += draw(statements(list(variables), indent + "    ", depth + 1))
            lines.append(f"{indent}else:")
            lines += draw(statements(variables, indent + "    ", depth + 1))
        elif kind == 10 and depth < 3:
            lines.append(f"{indent}for _step in range({draw(st.sampled_from(('3', 'n', 'T')))}):")
            lines += draw(statements(variables, indent + "    ", depth + 1))
        elif kind == 11 and depth < 3:
            context = draw(st.sampled_from(("torch.autocast('cuda', dtype=torch.bfloat16)", "torch.no_grad()",
                                            "torch.autocast(device_type='cpu')")))
            lines.append(f"{indent}with {context}:")
            lines += draw(statements(variables, indent + "    ", depth + 1))
        elif kind == 12:
            flag = draw(st.sampled_from((
                "torch.backends.cuda.matmul.allow_fp16_accumulation = True",
                "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True",
                "torch.backends.cuda.matmul.allow_tf32 = True",
                "torch.set_float32_matmul_precision('high')")))
            lines.append(f"{indent}{flag}")
        else:
            lines.append(f"{indent}{target} = {draw(st.sampled_from(variables))}{draw(shape_comment())}")
            variables.append(target)
    return lines


@st.composite
def function(draw, method: bool = False) -> list[str]:
    params = draw(st.lists(st.sampled_from(("x", "w", "q", "k", "v", "a", "b", "mask")), min_size=1, max_size=4,
                           unique=True))
    rendered = ["self"] if method else []
    for param in params:
        rendered.append(f"{param}: {draw(annotation())}" if draw(st.integers(0, 4)) else param)
    if draw(st.booleans()):
        rendered.append("flag: bool = False")
    returns = f" -> {draw(annotation())}" if draw(st.booleans()) else ""
    indent = "        " if method else "    "
    name = draw(st.sampled_from(("forward", "attention", "mlp", "score", "f")))
    decorator = draw(st.sampled_from(("", "@torch.no_grad()\n", "@jax.jit\n", "@staticmethod\n" if not method else "")))
    head = [f"{indent[:-4]}{line}" for line in decorator.splitlines()]
    head.append(f"{indent[:-4]}def {name}({', '.join(rendered)}){returns}:")
    body = draw(statements(list(params), indent))
    body.append(f"{indent}return {draw(st.sampled_from(params + ['y' if any(' y =' in line for line in body) else params[0]]))}")
    return head + body


@st.composite
def coherent_function(draw) -> list[str]:
    """A function whose operands are annotated with declared dims that (mostly) fit together, so the
    sites resolve and costing, budgets and every rule run on real numbers, then a random tail."""
    declared = st.sampled_from(tuple(DECLARED_DIMS))
    batch = draw(st.lists(declared, max_size=2))
    m, k, n = draw(declared), draw(declared), draw(declared)
    k_rhs = k if draw(st.integers(0, 4)) else draw(declared)  # sometimes a contraction mismatch
    batch_rhs = batch if draw(st.integers(0, 4)) else draw(st.lists(declared, max_size=2))
    dtypes = st.sampled_from(("Float", "BFloat16", "Float16", "Float32", "Int8"))
    a_shape, b_shape = " ".join([*batch, m, k]), " ".join([*batch_rhs, k_rhs, n])
    lines = [f"def contract(a: {draw(dtypes)}[Tensor, {quoted(a_shape)}], b: {draw(dtypes)}[Tensor, {quoted(b_shape)}],"
             f" c: Float[Tensor, {quoted(' '.join([*batch, n, m]))}], flag: bool = False):"]
    letters = "pqrs"[:len(batch)]
    contraction = draw(st.sampled_from((
        "a @ b", "torch.matmul(a, b)", "a.matmul(b)", "(a @ b) @ c", "a @ b @ c", "np.dot(a, b)", "jnp.dot(a, c)",
        f"torch.einsum({quoted(f'{letters}ij,{letters}jk->{letters}ik')}, a, b)",
        f"np.einsum({quoted(f'{letters}ij,{letters}jk,{letters}kl->{letters}il')}, a, b, c)",
        f"jnp.einsum({quoted(f'{letters}ij,{letters}jk->{letters}ik')}, a, b, preferred_element_type=jnp.bfloat16)",
        f"torch.einsum({quoted(f'{letters}ij,{letters}jk->{letters}ikj')}, a, b)",
        "F.scaled_dot_product_attention(a, b.transpose(-2, -1), b.transpose(-2, -1))",
    )))
    lines.append(f"    y = {contraction}{draw(shape_comment())}")
    lines += draw(statements(["a", "b", "c", "y"], "    "))
    lines.append("    return y")
    return lines


@st.composite
def module_class(draw) -> list[str]:
    lines = ["class Block(nn.Module):", "    def __init__(self, cfg):", "        super().__init__()",
             "        self.cfg = cfg"]
    for attribute in draw(st.lists(st.sampled_from(("proj", "w", "c_attn", "ln", "drop")), max_size=4, unique=True)):
        ctor = draw(st.sampled_from((
            f"nn.Linear(cfg.{draw(names)}, {draw(st.sampled_from(('cfg.d_ff', '3 * cfg.d_model', str(draw(st.sampled_from(SIZES))))))}, bias=False)",
            f"nn.Parameter(torch.empty(cfg.{draw(names)}, cfg.{draw(names)}))",
            f"nn.Parameter(torch.randn({draw(st.sampled_from(SIZES))}, {draw(st.sampled_from(SIZES))}))",
            "nn.LayerNorm(cfg.d_model)", "nn.Dropout(0.1)", "nn.Linear(*cfg.shape)")))
        lines.append(f"        self.{attribute} = {ctor}")
    lines.append("        self.n_head = cfg.nh")
    lines += draw(function(method=True))
    return lines


@st.composite
def model_programs(draw) -> str:
    """A whole module: imports, maybe a pragma and aliases, functions and classes."""
    parts = []
    if draw(st.booleans()):
        parts.append(draw(pragma()))
    parts.append("import math\nfrom typing import Optional")
    parts.append(draw(st.sampled_from(IMPORT_STYLES)))
    parts.append(JAXTYPING.rstrip())
    if draw(st.booleans()):
        parts.append(f"Scores = Float[Tensor, {quoted(draw(shape_string()))}]")
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 3))
        block = draw((module_class, function, coherent_function, coherent_function)[kind]())
        parts.append("\n".join(block))
    if draw(st.booleans()):
        parts.append(draw(pragma()))
    newline = draw(st.sampled_from(("\n", "\n", "\n", "\r\n")))
    return newline.join("\n\n".join(parts).split("\n")) + newline
