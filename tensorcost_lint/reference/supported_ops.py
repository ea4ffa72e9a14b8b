"""docs/reference/supported-ops.md: the calls, ops, `nn` modules and builtins the analysis
understands, each list read from the table the analysis itself uses (one small function per
table), and what is not covered."""

from __future__ import annotations

from ..analysis import calls, module_shapes, op_table, site_registry
from ..whole_model.library import builtin_registry, parameter_containers
from ..whole_model.python import python_values
from ..whole_model.values import library_layers


def _names(names) -> str:
    return ", ".join(f"`{name}`" for name in sorted(names, key=str.lower))


def call_sites() -> list[str]:
    """site_registry.SITES: every call costed as a call site."""
    lines = ["| call | framework | JSON `operation` | shape model |", "|---|---|---|---|"]
    for spec in site_registry.SITES:
        shown = site_registry.shown_name(spec)
        shown = shown if shown.startswith("calls") else f"`{shown}`"
        framework = spec.framework or "the operands'"
        model = f"`{spec.model}`" + (f" (`{spec.subscripts}`)" if spec.subscripts else "")
        lines.append(f"| {shown} | {framework} | `{spec.operation}` | {model} |")
    return lines


def shape_methods() -> list[str]:
    """op_table.METHODS: tensor methods whose result shape is computed."""
    return [_names(op_table.METHODS)]


def shape_functions() -> list[str]:
    """op_table.FUNCTIONS: module-level functions whose result shape is computed, by framework."""
    groups: dict[str, list[str]] = {}
    for name in op_table.FUNCTIONS:
        groups.setdefault(name.split(".", 1)[0], []).append(name)
    return [f"- {framework}: {_names(names)}" for framework, names in sorted(groups.items())]


def shape_preserving_modules() -> list[str]:
    """calls.SHAPE_PRESERVING_MODULES: module classes, matched by class name, that keep their input's shape."""
    return [_names(calls.SHAPE_PRESERVING_MODULES)]


def reshaping_modules() -> list[str]:
    """module_shapes: padding and pooling modules, which change the trailing dims and cost no FLOPs;
    and nn.MultiheadAttention (analysis/multihead_attention.py), whose call runs several sites."""
    return [_names(f"nn.{name}" for name in module_shapes.modelled_classes()),
            "", "`nn.MultiheadAttention`: its input projections, its attention (two `bmm` with `need_weights`, "
            "one fused attention without) and its output projection, each a site at the call."]


def module_containers() -> list[str]:
    """python_values._CONTAINERS and parameter_containers.CONTAINERS: torch containers built and
    iterated in whole models."""
    return [_names(f"nn.{name}" for name in (*python_values._CONTAINERS, *parameter_containers.CONTAINERS))]


def modules_with_parameters() -> list[str]:
    """library_layers.AFFINE_SWITCH: shape-preserving modules whose output needs a gradient in training."""
    lines = ["| module | the keyword that removes its parameters |", "|---|---|"]
    for name, switch in sorted(library_layers.AFFINE_SWITCH.items()):
        lines.append(f"| `nn.{name}` | {f'`{switch}=False`' if switch else '(none)'} |")
    return lines


def einops_layers() -> list[str]:
    """library_layers.EINOPS_LAYERS: einops layer classes applied to their input's shape."""
    return [_names(library_layers.EINOPS_LAYERS)]


def storage_views() -> list[str]:
    """op_table.OPS' view kinds: which ops share their input's storage (retained bytes count it once)."""
    return [
        f"- always a view: {_names(op_table.methods_of(op_table.VIEW))}",
        f"- a view where torch can view the sizes (else a copy): {_names(op_table.methods_of(op_table.RESHAPE))}",
        "- the same storage when the dtype (and device) do not change: "
        f"{_names(op_table.methods_of(op_table.SAME_IF_DTYPE))}",
        f"- each piece a view of the input: {_names(op_table.methods_of(op_table.PIECES))}",
        f"- the input itself: {_names(op_table.methods_of(op_table.ALIAS))}; in-place methods (`add_`)",
        f"- the input when it is already contiguous, else a copy: {_names(op_table.methods_of(op_table.CONTIGUOUS))}",
        f"- functions read as those methods: {_names(op_table.VIEW_FUNCTIONS)}",
        "- every other op makes a fresh storage",
    ]


def known_python_builtins() -> list[str]:
    """builtin_registry's entries: the Python builtins and stdlib callables the whole-model run
    evaluates, each with the values its readings read."""
    return [f"- builtins: {_names(builtin_registry.BUILTINS)}",
            f"- methods of builtin types: {_names(builtin_registry.TYPE_METHODS)}",
            f"- standard library, by imported name: {_names(builtin_registry.STDLIB)}",
            "- each over values known exactly (ints, strings, tuples, dicts), and where a second reading is "
            "listed in whole_model/library/builtin_registry.py, over module lists, sequences of tensors, "
            "configs and output records"]


_NOT_COVERED = """\
- Ops other than contractions and attention add no FLOPs (norms, activations, softmax, elementwise
  arithmetic): FlopCounterMode does not count them either. Their saved tensors (norm statistics,
  activation inputs, dropout masks) are not in `peak_retained_bytes`.
- A call not in these tables leaves its result's shape unknown: the sites it feeds are listed as
  unresolved with the reason, never guessed.
- A grouped convolution (`groups=`, depthwise included) is costed as FlopCounterMode counts it: the
  forward per group, the weight gradient in training with the input's whole channel count (torch's
  formula ignores groups there). A `padding="same"` string or an unbatched convolution input leaves
  that site unresolved.
- Decorators are not followed (the decorated body runs); recursion is not followed.
- See [Limits](../limits.md) for the rest."""


SECTIONS = (
    ("Call sites (costed)", "What tensorcost costs and lints, with every import style "
     "(`import torch as th`, `from torch import einsum`, …); `Tensor.NAME` methods work on numpy "
     "and jax arrays too.", call_sites),
    ("Tensor methods with a known result shape", "Propagation through these keeps the shape "
     "(and dtype) of the result.", shape_methods),
    ("Functions with a known result shape", "", shape_functions),
    ("Shape-preserving modules", "Matched by class name, so a re-implementation (nanoGPT's own "
     "`LayerNorm`) counts too. `nn.Linear`, `nn.LazyLinear` and `nn.Conv1d/2d/3d` are call sites "
     "(above); `nn.Embedding` is read by the whole-model run.", shape_preserving_modules),
    ("Modules that reshape, and modules of several sites", "Padding and pooling keep the batch and "
     "channels and give torch's spatial sizes (no FLOPs, as FlopCounterMode counts them).", reshaping_modules),
    ("Module containers (whole models)", "Built in `__init__` and iterated or indexed in `forward`.",
     module_containers),
    ("Modules that hold parameters (training)", "Their output needs a gradient even when their "
     "input does not.", modules_with_parameters),
    ("einops layers", "", einops_layers),
    ("Views and copies (retained bytes)", "", storage_views),
    ("Python builtins over known values (whole models)", "", known_python_builtins),
)


def supported_ops_page() -> str:
    lines = [
        "# Supported ops and modules",
        "",
        "<!-- generated by `python -m tensorcost_lint.reference` from the analysis tables",
        "     (analysis/site_registry.py, op_table.py, calls.py, module_shapes.py,",
        "     library_layers.py, library/builtin_registry.py);",
        "     tests/docs/test_generated_pages.py keeps it current -->",
        "",
        "Each list below is read from the table the analysis uses. How to add an entry:",
        "[Adding an op](../contributing/adding-an-op.md).",
        "",
    ]
    for title, intro, function in SECTIONS:
        lines += [f"## {title}", ""]
        if intro:
            lines += [intro, ""]
        lines += [*function(), ""]
    lines += ["## What is not covered", "", _NOT_COVERED, ""]
    return "\n".join(lines).rstrip("\n") + "\n"
