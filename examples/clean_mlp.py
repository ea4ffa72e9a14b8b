"""Clean serving code: a SwiGLU MLP in bfloat16 with fused attention. tensorcost has nothing to
say here beyond its cost ledger (`--select TCL501` to see it)."""

import torch
import torch.nn.functional as F
from jaxtyping import BFloat16
from torch import Tensor


def swiglu(
    x: BFloat16[Tensor, "tokens d_model"],
    w_gate: BFloat16[Tensor, "d_model d_ff"],
    w_up: BFloat16[Tensor, "d_model d_ff"],
    w_down: BFloat16[Tensor, "d_ff d_model"],
) -> BFloat16[Tensor, "tokens d_model"]:
    gate = F.silu(x @ w_gate)
    up = x @ w_up
    return (gate * up) @ w_down


def attend(
    q: BFloat16[Tensor, "batch head_index pos d_head"],
    k: BFloat16[Tensor, "batch head_index pos d_head"],
    v: BFloat16[Tensor, "batch head_index pos d_head"],
) -> BFloat16[Tensor, "batch head_index pos d_head"]:
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
