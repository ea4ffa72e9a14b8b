"""Every call tensorcost records as a call site, in one table (the style of
`estimator/planner/strategies.py`).

What counts as a site was once written in six places that drifted apart; now the engine's prefilter,
unit selection, the recorder's operand reading, the shape model, the attention layout, README's list
and TCL101's page all derive from `SITES`. Adding a call is one `SiteSpec` here plus one row in
`tests/analysis/test_site_registry.py` (a meta-test fails when an entry has no row).

This module is plain data: no LibCST, no analysis imports, so every floor may read it.
"""

from __future__ import annotations

from dataclasses import dataclass

# How the code reaches the call: a module-level function by its canonical name (`torch.matmul`,
# whatever the import style), a method on a tensor (`x.matmul(y)`), the `@` operator, or calling an
# `nn.Linear` attribute built in `__init__`.
FUNCTION, METHOD, OPERATOR, MODULE = "function", "method", "operator", "module"

# Shape models (site_shapes.SHAPE_MODELS): how operands become one einsum view.
#   matmul/mm/bmm  torch.matmul semantics, mm and bmm adding their rank rules
#   dot            np.dot: matmul up to 2-D, last-against-second-to-last beyond
#   linear         x [..., in] with weight [out, in]
#   contraction    a fixed einsum (`subscripts`) over the operands
#   einsum/einops  the subscripts or pattern written in the call
#   dot_general    lax.dot_general's literal dimension numbers
#   attention      fused attention in `layout`, costed as QKᵀ and PV with no scores materialized
#   grouped_mm     rows [S, K] sorted by group against one [K, N] matrix of each group: [G, K, N]
MODELS = ("matmul", "mm", "bmm", "dot", "linear", "contraction", "einsum", "einops", "dot_general", "attention",
          "grouped_mm")
ACCUMULATION_KEYWORDS = ("preferred_element_type", "out_dtype", "dtype")


@dataclass(frozen=True)
class SiteSpec:
    name: str  # functions: the canonical callee; methods: "x.NAME"; "@"; modules: "torch.nn.CLASS"
    form: str  # FUNCTION | METHOD | OPERATOR | MODULE
    operation: str  # the JSON `operation`: matmul | linear | einsum | attention | dot_general
    model: str  # one of MODELS
    framework: str = ""  # "" = the operands' framework (methods, `@`)
    # positions of the operands (a method's receiver is 0, its arguments 1, 2, ...); None = einsum-style varargs
    operands: tuple[int, ...] | None = (0, 1)
    keywords: tuple[str, ...] = ()  # the keyword each operand may be passed as, by position above
    subscripts: str | None = None  # the einsum of a "contraction" model
    layout: str | None = None  # attention: "bhsd" (torch SDPA, [..., L, E]) or "bshd" (jax, [B, T, N, H])
    label: str = ""  # the JSON `function` when it is not `name`

    def __post_init__(self) -> None:
        if self.form not in (FUNCTION, METHOD, OPERATOR, MODULE):
            raise ValueError(f"{self.name}: unknown form {self.form!r}")
        if self.model not in MODELS:
            raise ValueError(f"{self.name}: unknown shape model {self.model!r}")
        if (self.model == "contraction") != (self.subscripts is not None):
            raise ValueError(f"{self.name}: a contraction model and its subscripts go together")
        if (self.model == "attention") != (self.layout is not None):
            raise ValueError(f"{self.name}: an attention model and its layout go together")

    @property
    def call_name(self) -> str:
        """The name a call ends in (`einsum` of `th.einsum(...)`, `matmul` of `x.matmul(...)`)."""
        return self.name.rsplit(".", 1)[-1]


def _torch(name: str, model: str, operands=(0, 1), **more) -> SiteSpec:
    return SiteSpec(f"torch.{name}", FUNCTION, more.pop("operation", "matmul"), model, "torch", operands, **more)


SITES: tuple[SiteSpec, ...] = (
    SiteSpec("@", OPERATOR, "matmul", "matmul"),
    _torch("matmul", "matmul"),
    _torch("mm", "mm"),
    _torch("bmm", "bmm"),
    _torch("baddbmm", "bmm", (1, 2), keywords=("batch1", "batch2")),
    _torch("addmm", "mm", (1, 2), keywords=("mat1", "mat2")),
    _torch("addbmm", "contraction", (1, 2), keywords=("batch1", "batch2"), subscripts="bij,bjk->ik"),
    _torch("nn.functional.linear", "linear", operation="linear", keywords=("input", "weight")),
    SiteSpec("x.matmul", METHOD, "matmul", "matmul"),
    SiteSpec("x.mm", METHOD, "matmul", "mm"),
    SiteSpec("x.bmm", METHOD, "matmul", "bmm"),
    SiteSpec("x.dot", METHOD, "matmul", "dot"),
    SiteSpec("x.__matmul__", METHOD, "matmul", "matmul"),
    # the receiver is the added term (position 0 of a method's operands), the product's operands follow
    SiteSpec("x.baddbmm", METHOD, "matmul", "bmm", "", (1, 2), ("batch1", "batch2")),
    SiteSpec("x.addmm", METHOD, "matmul", "mm", "", (1, 2), ("mat1", "mat2")),
    SiteSpec("torch.nn.Linear", MODULE, "linear", "linear", "torch", label="nn.Linear"),
    SiteSpec("torch.nn.LazyLinear", MODULE, "linear", "linear", "torch", label="nn.Linear"),
    # convolutions as their im2col contraction (analysis/convolutions.py): FlopCounterMode's count
    SiteSpec("torch.nn.Conv1d", MODULE, "convolution", "contraction", "torch", subscripts="ncyi,oci->noy",
             label="nn.Conv1d"),
    SiteSpec("torch.nn.Conv2d", MODULE, "convolution", "contraction", "torch", subscripts="ncyxij,ocij->noyx",
             label="nn.Conv2d"),
    SiteSpec("torch.nn.Conv3d", MODULE, "convolution", "contraction", "torch", subscripts="nczyxijk,ocijk->nozyx",
             label="nn.Conv3d"),
    *(SiteSpec(f"torch.nn.functional.conv{rank}d", FUNCTION, "convolution", "contraction", "torch", (0, 1),
               ("input", "weight"), subscripts=subscripts)
      for rank, subscripts in ((1, "ncyi,oci->noy"), (2, "ncyxij,ocij->noyx"), (3, "nczyxijk,ocijk->nozyx"))),
    # mixture-of-experts kernels: each row meets one expert's matrix (`offs` ends each expert's rows)
    _torch("nn.functional.grouped_mm", "grouped_mm", keywords=("mat_a", "mat_b")),
    _torch("_grouped_mm", "grouped_mm", keywords=("self", "mat2")),
    SiteSpec("numpy.matmul", FUNCTION, "matmul", "matmul", "numpy"),
    SiteSpec("numpy.dot", FUNCTION, "matmul", "dot", "numpy"),
    SiteSpec("jax.numpy.matmul", FUNCTION, "matmul", "matmul", "jax"),
    SiteSpec("jax.numpy.dot", FUNCTION, "matmul", "dot", "jax"),
    SiteSpec("jax.lax.dot_general", FUNCTION, "dot_general", "dot_general", "jax"),
    SiteSpec("torch.einsum", FUNCTION, "einsum", "einsum", "torch", None),
    SiteSpec("numpy.einsum", FUNCTION, "einsum", "einsum", "numpy", None),
    SiteSpec("jax.numpy.einsum", FUNCTION, "einsum", "einsum", "jax", None),
    SiteSpec("opt_einsum.contract", FUNCTION, "einsum", "einsum", "opt_einsum", None),
    SiteSpec("einops.einsum", FUNCTION, "einsum", "einops", "einops", None),
    SiteSpec("torch.nn.functional.scaled_dot_product_attention", FUNCTION, "attention", "attention", "torch",
             (0, 1, 2), ("query", "key", "value"), layout="bhsd"),
    SiteSpec("jax.nn.dot_product_attention", FUNCTION, "attention", "attention", "jax",
             (0, 1, 2), ("query", "key", "value"), layout="bshd"),
)

FUNCTIONS = {spec.name: spec for spec in SITES if spec.form == FUNCTION}
METHODS = {spec.call_name: spec for spec in SITES if spec.form == METHOD}
MODULE_CLASSES = {spec.call_name: spec for spec in SITES if spec.form == MODULE}
OPERATOR_SPEC = next(spec for spec in SITES if spec.form == OPERATOR)
# Names a call to a site ends in: what unit selection looks for in a function's tree and text.
CALL_NAMES = frozenset(spec.call_name for spec in SITES if spec.form in (FUNCTION, METHOD))
# A file holding none of these (nor `@`) holds no site: the engine's prefilter.
PREFILTER_NAMES = CALL_NAMES | frozenset(MODULE_CLASSES)


def shown_name(spec: SiteSpec) -> str:
    """How docs name an entry: `Tensor.matmul` for a method, calls of an `nn.Linear` attribute."""
    if spec.form == METHOD:
        return f"Tensor.{spec.call_name}"
    if spec.form == MODULE:
        return f"calls of `nn.{spec.call_name}` attributes"
    return spec.name


def readme_list() -> str:
    """README's list of call sites (between its `site-list` markers), grouped by framework."""
    groups: dict[str, list[str]] = {}
    for spec in SITES:
        shown = shown_name(spec)
        groups.setdefault(spec.framework or "torch", []).append(shown if shown.startswith("calls") else f"`{shown}`")
    return "".join(f"  - {framework}: {', '.join(names)}\n" for framework, names in groups.items())
