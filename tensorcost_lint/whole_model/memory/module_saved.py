"""What a leaf torch module keeps for its backward (memory_activations), whether the code calls it
(`self.norm(x)`) or nn.Sequential runs it: dropout, nn.Identity, the norms, transformers'
NewGELUActivation by their own rules; the activations by saved_table's MODULES."""

from __future__ import annotations

from ...analysis.facts import DimFact, SequenceFact, TensorFact
from .dropout_memory import alias as _alias, dropout_saved
from .saved_table import MODULES, by_rule
from ..values.strides import product

DROPOUTS = frozenset({"Dropout", "Dropout1d", "Dropout2d", "AlphaDropout"})


def module_saved(run, callee, args, out) -> tuple:
    """(the storages `callee(*args)` keeps, or why not known; the (elements, dtype) its backward
    allocates besides)."""
    tracker = run.storage
    kind = run.parameters.classes.get(id(callee))
    if kind in DROPOUTS:
        return dropout_saved(run, run.parameters.dropout_p.get(id(callee)), out, args), ()
    if kind == "Identity":
        return _alias(tracker, out, args[:1]), ()
    if kind == "LayerNorm":
        rank = run.parameters.norm_rank.get(id(callee))
        if rank is None:
            return "nn.LayerNorm over a normalized_shape that is not known", ()
        return layer_norm_saved(tracker, args[0] if args else None, SequenceFact((None,) * rank)), ()
    if kind == "NewGELUActivation":
        saved = new_gelu_saved(tracker, args[:1], out)
        # its last product's backward makes a gradient for each factor
        return saved, (() if isinstance(saved, str) else ((saved[1].numel, saved[1].dtype),))
    if kind == "RMSNorm":
        rank = run.parameters.norm_rank.get(id(callee))
        if rank is None:
            return "nn.RMSNorm over a normalized_shape that is not known", ()
        held = run.parameters.held.get(id(callee), (None, None))[1]
        if held is None or isinstance(held, str):
            return "nn.RMSNorm whose weight is not known", ()
        return rms_norm_saved(tracker, args[0] if args else None, rank, bool(held)), ()
    what = MODULES.get(kind)
    if what is None:
        return f"nn.{kind or 'module'} (what it saves is not in tensorcost's table)", ()
    return by_rule(tracker, what, args, out), ()


def new_gelu_saved(tracker, inputs, out):
    """transformers' NewGELUActivation, `0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 *
    torch.pow(x, 3.0))))` (activations.py): its ops save x (pow), tanh's result, `0.5 * x` and `1 + tanh`
    (the last product), and the three Python numbers they multiply by."""
    x = inputs[0] if inputs and type(inputs[0]) is TensorFact else None
    layout = tracker.ensure(x) if x is not None else None
    if layout is None or layout.sizes is None:
        return "NewGELUActivation of a tensor of unknown size"
    numel = product(layout.sizes)
    made = [tracker.copy_storage(numel, x.dtype) for _ in range(3)]  # tanh(...), 0.5 * x, 1.0 + tanh(...)
    numbers = [tracker.copy_storage(1, "float64") for _ in range(3)]
    return (layout.storage, *made, *numbers)


def rms_norm_saved(tracker, x, rank: int, affine: bool):
    """torch's rms_norm as its CPU composite runs it (pow, mean, add_, rsqrt, mul, type_as, then the
    product with the weight): the input, upcast to float32 first when narrower (the copy is what pow
    and mul keep); the reciprocal root of each normalised row, in that float type; with a weight, the
    normalised input in its own dtype (what the product with the weight keeps)."""
    layout = tracker.ensure(x) if type(x) is TensorFact else None
    if layout is None or layout.sizes is None or rank > len(layout.sizes):
        return "rms norm of a tensor of unknown size"
    dtype = x.dtype or getattr(tracker.run, "default_dtype", None)
    numel, rows = product(layout.sizes), product(layout.sizes[:len(layout.sizes) - rank])
    narrow = dtype in ("bfloat16", "float16")
    kept = [tracker.copy_storage(numel, "float32") if narrow else layout.storage,
            tracker.copy_storage(rows, "float32" if narrow else dtype)]
    if affine:
        kept.append(tracker.copy_storage(numel, dtype))
    return tuple(kept)


def normalized_rank(shape_arg) -> int | None:
    """How many trailing dims a norm's `normalized_shape` covers: a tuple's length, one for a single
    size; None when not known."""
    if type(shape_arg) is SequenceFact:
        return len(shape_arg.items)
    return 1 if type(shape_arg) is DimFact else None


def layer_norm_saved(tracker, x, shape_arg):
    layout = tracker.ensure(x) if type(x) is TensorFact else None
    if layout is None or layout.sizes is None:
        return "layer norm of a tensor of unknown size"
    rank = normalized_rank(shape_arg)
    if rank is None:
        return f"layer norm over a normalized_shape that is not known ({type(shape_arg).__name__})"
    rows = product(layout.sizes[:len(layout.sizes) - rank])
    dtype = x.dtype  # float32 for float32 input; a half input keeps float32 statistics on CUDA only
    return (layout.storage, tracker.copy_storage(rows, dtype), tracker.copy_storage(rows, dtype))
