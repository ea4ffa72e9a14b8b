"""`totals.memory` of a whole-model run (Contract 9): the bytes of each category of a training step
or an inference pass, exact, each with its formula in the dims. docs/memory.md states the model.

- parameters: every parameter tensor the built model holds (memory_parameters), once per tensor,
  in `precision.parameters` (or the dtype the code builds it in).
- gradients (training): one `.grad` per parameter the forward uses (parameter_gradients), in
  `precision.gradients` (torch: the parameter's); a frozen or unused one has none, and no state.
- optimizer_states (training): what torch's optimizer keeps per parameter after its first step —
  adam/adamw: `exp_avg`, `exp_avg_sq` (like the parameter) and `step` (a float32 scalar tensor);
  sgd: nothing; sgd-momentum: `momentum_buffer`; lion: `exp_avg`; adafactor: `step`, and `row_var`
  and `col_var` (the parameter's shape with its last, resp. second-to-last, dim set to 1) for a
  parameter of two or more dims, `variance` (like it) otherwise. With `precision.master_weights`,
  the optimizer steps a copy of every parameter in that dtype (`master_weights`), and its states
  follow the copy's dtype unless `precision.optimizer_states` names one.
- activations (training): every storage autograd saves, at the end of the forward
  (memory_activations; unknown, with the ops named, when an op outside its table saves something).
- kv_cache (prefill, decode): the tensors the cache object the forward returns holds, by storage
  (kv_cache.py) — after a decode step, `cache_len + 1` tokens (decode_step.py); null in the other modes.
- activations, peak (inference): the largest live set of the forward's tensors (memory_live; the
  entry's inputs included) and the parameters plus it, in phase `forward`.
- peak, peak_phase (training): memory_peak's liveness model over the run's backward nodes and the
  optimizer's foreach temporaries, or null with the reason. `peak_lower_bound` is what the step
  certainly holds at one moment: the model states plus the larger of the activations (all live at
  the end of the forward; the contractions' saved tensors where the activations are unknown) and
  the gradients (all live at the end of the backward). A device smaller than it cannot run the step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from estimator import normalize_dtype
from shape_annotations import Polynomial, ShapeError

from .memory_activations import approximate_sites, saved_activations
from .memory_live import LiveUnknown
from .memory_live_walk import inference_activations
from .memory_parameters import count_parameters
from .parameter_gradients import unused_parameters
from ..library.kv_cache import kv_cache_bytes
from .memory_peak import AdafactorGroup, PeakUnknown, add_adafactor_tensor, training_peak

CATEGORIES = ("parameters", "gradients", "optimizer_states", "master_weights", "activations", "kv_cache", "peak")
STEP_BYTES = 4  # torch keeps an optimizer's `step` as a float32 scalar tensor per parameter (not capturable)
_MAX = 2**63 - 1

_NOT_YET = {
    "activations": "the activations of a serving pass are not modelled yet (totals.peak_retained_bytes counts "
                   "the contractions' and attention's)",
    "kv_cache": "the KV cache is a serving figure: computed in modes prefill and decode",
}


@dataclass
class MemoryTotals:
    values: dict = field(default_factory=dict)  # category -> exact bytes, or None
    formulas: dict = field(default_factory=dict)  # category -> formula in the dims, or None
    reasons: dict = field(default_factory=dict)  # category -> why it is None or partial
    peak_phase: str | None = None
    peak_lower_bound: int | None = None
    by_module: dict = field(default_factory=dict)  # module path -> {"parameters": bytes, "activations": bytes}

    def as_json(self) -> dict:
        record = {name: self.values.get(name) for name in CATEGORIES}
        record["peak_phase"] = self.peak_phase
        record["peak_lower_bound"] = self.peak_lower_bound
        record["memory_formulas"] = {name: self.formulas[name] for name in CATEGORIES if name in self.formulas}
        record["unknown"] = dict(self.reasons)
        return record


def _bytes(dtype: str | None, default_dtype: str) -> int:
    return normalize_dtype(dtype or default_dtype).bytes


def _state_elements(optimizer: str, shape: tuple, elements: Polynomial):
    """(elements kept like the stepped tensor, step scalars) per parameter; None: unknown."""
    if optimizer in ("none", "sgd"):
        return Polynomial.const(0), 0
    if optimizer in ("sgd-momentum", "lion"):
        return elements, 0
    if optimizer in ("adam", "adamw"):
        return elements * 2, 1
    # adafactor (torch.optim.Adafactor): factored second moments of a matrix, a full one otherwise
    if len(shape) < 2:
        return elements, 1
    row = Polynomial.from_dims(shape[:-1])
    column = Polynomial.from_dims(shape[:-2] + shape[-1:])
    return (None, 1) if row is None or column is None else (row + column, 1)


def memory_totals(run, root, entry, default_dtype: str, retained: int | None, sizes: dict) -> MemoryTotals:
    """`root`: the entry's module object (None for a plain function: no parameters); `retained`: the
    run's peak retained bytes (the contractions' saved tensors in training)."""
    settings, training = entry.memory, entry.mode == "training"
    precision = settings.precision
    result = MemoryTotals()
    counted = count_parameters(run, root) if root is not None else None
    polys = {name: Polynomial.const(0) for name in ("parameters", "gradients", "optimizer_states", "master_weights")}
    unknown_parameters = list(counted.reasons) if counted is not None else []
    module_parameters: dict = {}
    gradient_paths: dict = {}  # (module path, name) -> (gradient bytes, copies) polynomials (memory_peak)
    sqrt_groups: dict = {}  # stepped dtype -> bytes of one state like the stepped tensor (adam's exp_avg_sq)
    factor_groups: dict = {}  # (stepped dtype, matrix?) -> adafactor's temporaries (memory_peak.AdafactorGroup)
    unused = unused_parameters(run, counted) if training else set()
    for index, ((copies, tensor), path) in enumerate(zip(counted.tensors if counted is not None else (),
                                                         counted.paths if counted is not None else ())):
        one = Polynomial.from_dims(tensor.shape)
        if one is None:
            unknown_parameters.append(f"{tensor.name}: a size is not known")
            continue
        elements = one * copies
        parameter_dtype = precision.parameters or tensor.dtype
        held = elements * _bytes(parameter_dtype, default_dtype)
        polys["parameters"] = polys["parameters"] + held
        module_parameters[path] = module_parameters.get(path, Polynomial.const(0)) + held
        if not training or not tensor.trainable or index in unused:
            continue  # a frozen parameter, or one no op of the forward uses, gets no .grad and no optimizer state
        grads = elements * _bytes(precision.gradients or parameter_dtype, default_dtype)
        polys["gradients"] = polys["gradients"] + grads
        gradient_paths[(path, tensor.name)] = (grads, copies)
        stepped = parameter_dtype
        if precision.master_weights is not None:
            stepped = precision.master_weights
            polys["master_weights"] = polys["master_weights"] + elements * _bytes(stepped, default_dtype)
        kept, scalars = _state_elements(settings.optimizer, tensor.shape, one)
        if kept is None:
            unknown_parameters.append(f"{tensor.name}: the optimizer's state shape is not known")
            continue
        state_bytes = _bytes(precision.optimizer_states or stepped, default_dtype)
        states = kept * copies * state_bytes + copies * (STEP_BYTES * scalars)
        group = normalize_dtype(stepped or default_dtype).name
        sqrt_groups[group] = sqrt_groups.get(group, Polynomial.const(0)) + elements * state_bytes
        if settings.optimizer == "adafactor":
            add_adafactor_tensor(factor_groups, group, tensor.shape, copies, state_bytes)
        polys["optimizer_states"] = polys["optimizer_states"] + states
    names = ("parameters", "gradients", "optimizer_states", "master_weights")
    for name in names:
        if unknown_parameters and (training or name == "parameters"):
            result.values[name] = None
            result.formulas[name] = None
            result.reasons[name] = "; ".join(unknown_parameters[:3]) + (
                f" (and {len(unknown_parameters) - 3} more)" if len(unknown_parameters) > 3 else "")
            continue
        try:
            value = polys[name].evaluate(sizes)
        except ShapeError as error:
            result.values[name], result.formulas[name] = None, polys[name].render()
            result.reasons[name] = str(error)
            continue
        result.values[name] = value
        result.formulas[name] = polys[name].render()
    for name, reason in _NOT_YET.items():
        result.values[name] = None
        result.reasons[name] = reason
    if entry.mode in ("prefill", "decode"):  # the cache the forward returns (kv_cache.py)
        value, formula, reason = kv_cache_bytes(run, run.returned, sizes, default_dtype, settings.cache_dtype)
        result.values["kv_cache"], result.formulas["kv_cache"] = value, formula
        if reason is None:
            result.reasons.pop("kv_cache")
        else:
            result.reasons["kv_cache"] = reason
    if not unknown_parameters:
        _per_module(result, "parameters", {path: _value(poly, sizes) for path, poly in module_parameters.items()})
    if training:
        _activations(run, result, sizes, default_dtype)
    result.values["peak"] = None
    if training:
        _peak(run, result, settings, gradient_paths, sqrt_groups if settings.optimizer != "adafactor" else factor_groups,
              sizes, default_dtype)
    elif entry.mode == "inference":
        _inference(run, result, sizes, default_dtype)
    else:
        result.reasons["peak"] = "the peak of a serving pass is not modelled yet"
    saved = result.values.get("activations")
    result.peak_lower_bound = _lower_bound(result.values, saved if saved is not None else retained, training)
    return result


def _activations(run, result: MemoryTotals, sizes: dict, default_dtype: str) -> None:
    """Every storage autograd saves at the end of the forward (memory_activations), or why not."""
    unknown = run.saved_ops.unknown
    if run.storage.failure is not None:
        result.reasons["activations"] = f"not computed ({run.storage.failure})"
        return
    left_out = len(run.unfollowed) + len(run.limits)
    if left_out:  # what an unfollowed call saves is unknown: a sum without it is no total
        result.reasons["activations"] = f"{left_out} call(s) not followed: what they save is not known"
        return
    if unknown:
        more = f" (and {len(unknown) - 3} more)" if len(unknown) > 3 else ""
        result.reasons["activations"] = "what these ops save is not modelled: " + "; ".join(unknown[:3]) + more
        return
    approximate = approximate_sites(run.stack[0])
    if approximate:
        result.reasons["activations"] = ("what einsum-style contractions save is modelled approximately (the "
                                         "operands as written, not torch's reshaped copies; a convolution that pads into a "
                                         "copy): "
                                         + "; ".join(dict.fromkeys(approximate[:3])))
        return
    total, by_module = saved_activations(run.stack[0], sizes, default_dtype)
    if total is None:
        result.reasons["activations"] = "a saved tensor's size is not known"
        return
    result.values["activations"] = total
    result.reasons.pop("activations")
    _per_module(result, "activations", by_module)


def _inference(run, result: MemoryTotals, sizes: dict, default_dtype: str) -> None:
    """Inference: `activations` is the largest live set of the forward's tensors (memory_live),
    `peak` the parameters and it, in phase `forward`; or why not."""
    try:
        live = inference_activations(run, sizes, default_dtype)
    except LiveUnknown as error:
        result.reasons["activations"] = f"not computed: {error}"
        result.reasons["peak"] = "not computed: the activations are not known (totals.memory.unknown.activations)"
        return
    result.values["activations"] = live
    result.reasons.pop("activations", None)
    parameters = result.values.get("parameters")
    if parameters is None:
        result.reasons["peak"] = "not computed: the parameters are not known (totals.memory.unknown.parameters)"
        return
    if parameters + live > _MAX:
        raise OverflowError("the peak exceeds 2**63-1 bytes")
    result.values["peak"], result.peak_phase = parameters + live, "forward"


def _peak(run, result: MemoryTotals, settings, gradient_paths, sqrt_groups, sizes, default_dtype) -> None:
    """`peak` and `peak_phase` by memory_peak's liveness model, or why not."""
    try:
        paths = {path: (grads.evaluate(sizes), copies.evaluate(sizes)) for path, (grads, copies) in gradient_paths.items()}
        groups = [group.evaluate(sizes) if type(group) is AdafactorGroup else group.evaluate(sizes)
                  for group in sqrt_groups.values()]
        peak, phase = training_peak(run, result.values, paths, _tied_paths(run), settings.optimizer, groups, sizes,
                                    default_dtype, settings.precision.master_weights)
    except ShapeError as error:
        result.reasons["peak"] = f"not computed: {error}"
        return
    except PeakUnknown as error:
        result.reasons["peak"] = f"not computed: {error}; peak_lower_bound is what the step certainly holds at one moment"
        return
    if peak > _MAX:
        raise OverflowError("the peak exceeds 2**63-1 bytes")
    result.values["peak"], result.peak_phase = peak, phase


def _tied_paths(run) -> dict:
    """(module path, name) of a parameter -> the other module paths that read it (a tied weight:
    `self.tokens.weight = self.head.weight`, Hugging Face's `_tied_weights_keys`)."""
    tied: dict = {}
    for (left, name), (right, _) in run.parameters.ties.items():
        reader, holder = run.paths.by_id(left), run.paths.by_id(right)
        if reader is not None and holder is not None:
            tied.setdefault((holder, name), []).append(reader)
    return tied


def _value(poly, sizes: dict):
    try:
        return poly.evaluate(sizes)
    except ShapeError:
        return None


def _per_module(result: MemoryTotals, category: str, sums: dict) -> None:
    """Each module path's bytes including its submodules' ("" is the whole model)."""
    for path, value in sums.items():
        if value is None:
            continue
        parts = path.split(".") if path else []
        for prefix in dict.fromkeys([""] + [".".join(parts[:i]) for i in range(1, len(parts) + 1)]):
            record = result.by_module.setdefault(prefix, {})
            record[category] = record.get(category, 0) + value


def _lower_bound(values: dict, retained: int | None, training: bool) -> int | None:
    states = [values.get(name) for name in ("parameters", "optimizer_states", "master_weights")]
    gradients = values.get("gradients") if training else 0
    if None in states or gradients is None:
        return None
    total = sum(states) + max(gradients, retained or 0)
    return total if total <= _MAX else None
