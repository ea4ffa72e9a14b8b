"""Attention scores with jaxtyping annotations, as interpretability code writes them."""

import torch
from jaxtyping import Float
from torch import Tensor


def attention_pattern(
    q: Float[Tensor, "batch heads seq d_head"],
    k: Float[Tensor, "batch heads seq d_head"],
) -> Float[Tensor, "batch heads seq seq"]:
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / q.shape[-1] ** 0.5
    return scores.softmax(dim=-1)


def mix_values(
    pattern: Float[Tensor, "batch heads seq seq"],
    v: Float[Tensor, "batch heads seq d_head"],
) -> Float[Tensor, "batch heads seq d_head"]:
    return pattern @ v


def unembed(resid: Float[Tensor, "batch seq d_model"], w: Float[Tensor, "d_head d_ff"]):
    return resid @ w
