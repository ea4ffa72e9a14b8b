"""Which parameters a training step gives a gradient (Contract 9's `gradients` and `optimizer_states`).

autograd writes `.grad` only for a parameter that fed an op of the forward; one the forward never
uses keeps `.grad = None`, and torch's optimizers skip such a parameter: AdamW makes no `exp_avg`,
`exp_avg_sq` or `step` for it (`_init_group` reads only `p.grad is not None`). So a module the
forward never reaches (the cross-attention of an encoder-decoder's decoder run without encoder
states, `if encoder_hidden_states is not None:` not taken) holds parameters that cost the step no
gradient and no state.

A parameter counts as used when the forward, with gradients on, evaluated an expression to its
holder (`self.proj`, `self` in the holder's own forward, a layer a loop binds) or to a container
or subclass it runs within (memory_parameters.ParameterCount.holders), or to the holder of a
tensor tied to it. That over-approximates use, never under-approximates it: a module read for its
attributes only still counts as used. Nothing is claimed when the run did not follow every call
(an unread callee may use any module), or a limit stopped it."""

from __future__ import annotations


def unused_parameters(run, counted) -> set:
    """Indexes into `counted.tensors` of the parameters the forward never uses (empty when that
    cannot be told)."""
    if counted is None or run.unfollowed or run.limits or not run.grad_flow.enabled:
        return set()
    read = run.grad_flow.modules_read
    unused = set()
    for index, (key, chain) in enumerate(counted.holders):
        chains = [chain, *counted.tied.get(key, ())]
        if not any(holder in read for one in chains for holder in one):
            unused.add(index)
    return unused
