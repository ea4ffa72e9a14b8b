"""Torch's own counts of a training step's memory, the figures `totals.memory` must equal:
`torch.distributed._tools.mem_tracker.MemTracker` on CPU for a steady-state step (one untracked
warm-up step creates the optimizer's states; then forward, backward, `optimizer.step()`,
`zero_grad()` under the tracker), read by category."""

from __future__ import annotations


def tracked_step(model, inputs, optimizer, loss_of, autocast=None) -> dict:
    """{"peak": total bytes at the step's peak, "peak_categories": {category: bytes} at that moment,
    "after": {category: bytes} once the step is done} for one steady-state step of `model`;
    `loss_of(output)` is the scalar the backward starts from; `autocast`: a dtype the forward runs
    in under `torch.autocast("cpu")` (a bfloat16 model whose buffers stay float32)."""
    import contextlib

    import torch

    def forward():
        with torch.autocast("cpu", dtype=autocast) if autocast is not None else contextlib.nullcontext():
            return loss_of(model(*inputs))

    model.train(True)
    forward().backward()  # warm-up: the optimizer makes its states in its first step
    optimizer.step()
    optimizer.zero_grad()
    tracker = _tracker_class()()
    tracker.track_external(model, optimizer)
    with tracker:
        forward().backward()
        optimizer.step()
        optimizer.zero_grad()
        after = tracker.get_tracker_snapshot("current")
    device = torch.device("cpu")
    peak = tracker.get_tracker_snapshot("peak")[device]
    return {"peak": peak["Total"], "peak_categories": {str(k): v for k, v in peak.items()},
            "after": {str(k): v for k, v in after[device].items()}}


def parameter_bytes(model) -> int:
    """The bytes of model.parameters(), once per storage (a tied weight once)."""
    storages = {p.untyped_storage().data_ptr(): p.untyped_storage().nbytes() for p in model.parameters()}
    return sum(storages.values())


def state_bytes(optimizer) -> int:
    """The bytes of every tensor in the optimizer's per-parameter state, once per storage."""
    import torch

    storages = {}
    for state in optimizer.state.values():
        for value in state.values():
            if isinstance(value, torch.Tensor):
                storages[value.untyped_storage().data_ptr()] = value.untyped_storage().nbytes()
    return sum(storages.values())


def saved_activation_bytes(loss, model) -> int:
    """Bytes of every storage autograd holds for backward at the end of the forward: each node's
    `_saved_*` tensors (and a reentrant checkpoint's saved inputs), over every `grad_fn` reachable
    from `loss`, one count per storage, parameters excluded."""
    import torch

    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    storages: dict = {}
    seen, pending = set(), [loss.grad_fn]
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        saved = []
        for name in dir(node):
            if name.startswith("_saved_"):
                value = getattr(node, name)
                saved.extend(value if isinstance(value, (tuple, list)) else [value])
        if type(node).__name__ == "CheckpointFunctionBackward":
            saved.extend(node.saved_tensors)
        for tensor in saved:
            if isinstance(tensor, torch.Tensor):
                storage = tensor.untyped_storage()
                if storage.data_ptr() not in parameters:
                    storages[storage.data_ptr()] = storage.nbytes()
        pending.extend(f for f, _ in node.next_functions)
    return sum(storages.values())


def step_peak(model, inputs, optimizer, loss_of) -> dict:
    """{"peak": MemTracker's peak for a steady-state step less its buffers (which tensorcost does not
    count: a constant through the step, so the moment of the peak is the same), "phase": where it
    happens — "optimizer" inside `optimizer.step()`, "backward" while MemTracker's module tracker is
    in the backward, else "forward"} (the same step as `tracked_step`)."""

    def step(tracker) -> None:
        loss_of(model(*inputs)).backward()
        optimizer.step()
        optimizer.zero_grad()

    model.train(True)
    step(None)  # warm-up: the optimizer makes its states in its first step
    return _phased_peak(step, (model, optimizer))


def mixed_precision_step_peak(model, inputs, loss_of) -> dict:
    """docs/memory.md's mixed-precision protocol in plain torch: the model in bfloat16
    (`model.to(torch.bfloat16)`), a float32 master copy of each parameter that torch's foreach AdamW
    steps; after the backward each master's `.grad` is its parameter's gradient cast to float32
    (`master.grad = param.grad.float()`), then `step()`, the masters copied back into the bfloat16
    parameters, and `zero_grad()` on both. One untracked warm-up step, then the step under MemTracker:
    `step_peak`'s {"peak", "phase"} (the casts and the copy back belong to phase "optimizer"), and
    "categories" — the bytes of the parameters, the master weights, the optimizer's states, the
    bfloat16 and the float32 gradients, by storage, after the backward of the tracked step."""
    import torch

    model.to(torch.bfloat16)
    params = list(model.parameters())
    masters = [param.detach().float().requires_grad_() for param in params]
    optimizer = torch.optim.AdamW(masters, foreach=True)
    seen: dict = {}

    def step(tracker) -> None:
        loss_of(model(*inputs)).backward()
        if tracker is not None:
            tracker.phase_of_step = "optimizer"
        for param, master in zip(params, masters):
            master.grad = param.grad.float()
        seen.update(parameters=_storage_bytes(params), master_weights=_storage_bytes(masters),
                    optimizer_states=state_bytes(optimizer), gradients=_storage_bytes(p.grad for p in params),
                    master_gradients=_storage_bytes(m.grad for m in masters))
        optimizer.step()
        with torch.no_grad():
            for param, master in zip(params, masters):
                param.copy_(master)
        optimizer.zero_grad()
        model.zero_grad()

    model.train(True)
    step(None)  # warm-up: AdamW makes its states in its first step
    measured = _phased_peak(step, (model, optimizer, *masters))
    return {**measured, "categories": dict(seen)}


def _tracker_class():
    """MemTracker, except that it hooks only the parameters that get a gradient: it registers a
    gradient hook on every parameter, which torch refuses on a frozen one (roformer's sinusoidal
    positions); a frozen parameter has no gradient to track."""
    from torch.distributed._tools.mem_tracker import MemTracker

    class _NoHook:
        def remove(self) -> None:
            pass

    class GradientTracker(MemTracker):
        def _track_module_params_and_buffers(self, module, install_grad_hooks=True):
            for param in module.parameters():
                if not param.requires_grad and self._param_to_grad_hook_handles.get(param) is None:
                    self._param_to_grad_hook_handles[param] = (_NoHook(), _NoHook())
            return super()._track_module_params_and_buffers(module, install_grad_hooks)

    return GradientTracker


def _storage_bytes(tensors) -> int:
    return sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}.values())


def _phased_peak(step, external) -> dict:
    """MemTracker's peak (less buffers) and its phase over `step(tracker)`, the `external` modules,
    optimizers and tensors made before it tracked (`track_external`)."""
    import torch

    class PhasedTracker(_tracker_class()):
        """MemTracker that notes the phase of every op that raises its peak; `phase_of_step`, set
        by the step, names the phase of what runs outside the forward, backward and step()."""

        best, phase, phase_of_step = 0, None, None

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            result = super().__torch_dispatch__(func, types, args, kwargs)
            current = self._curr_mem_snap.get(torch.device("cpu"))
            if current is not None and current["Total"] > self.best:
                self.best = current["Total"]
                self.phase = ("optimizer" if self._in_opt else self.phase_of_step or
                              ("backward" if self._mod_tracker.is_bw else "forward"))
            return result

    tracker = PhasedTracker()
    tracker.track_external(*external)
    with tracker:
        step(tracker)
    peak = {str(k): v for k, v in tracker.get_tracker_snapshot("peak")[torch.device("cpu")].items()}
    assert peak["Total"] == tracker.best
    return {"peak": peak["Total"] - peak.get("_MemRefType.BUFFER", 0), "phase": tracker.phase,
            "peak_categories": peak}


def inference_peak(model, inputs, **keywords) -> dict:
    """{"peak": MemTracker's peak for one forward of `model` under `torch.no_grad()` (eval mode), the
    inputs tracked too (`track_external`: the caller holds them through the forward) and its buffers
    left out (tensorcost does not count them), "activations": that peak less the parameters}."""
    import torch
    from torch.distributed._tools.mem_tracker import MemTracker

    model.eval()
    tracker = MemTracker()
    tracker.track_external(model, *[t for t in (*inputs, *keywords.values()) if isinstance(t, torch.Tensor)])
    with torch.no_grad(), tracker:
        model(*inputs, **keywords)
    peak = {str(k): v for k, v in tracker.get_tracker_snapshot("peak")[torch.device("cpu")].items()}
    total = peak["Total"] - peak.get("_MemRefType.BUFFER", 0)
    return {"peak": total, "activations": total - peak["_MemRefType.PARAM"]}
