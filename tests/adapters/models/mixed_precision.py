"""Mixed-precision matmuls: accumulation dtypes and mismatched operands."""

import torch
from jaxtyping import BFloat16, Float, Float16
from torch import Tensor


def half_scores(q: Float16[Tensor, "batch seq d_head"], k: Float16[Tensor, "batch d_head seq"]):
    return torch.matmul(q, k, out_dtype=torch.float16)


def mixed(x: BFloat16[Tensor, "batch seq d_model"], w: Float[Tensor, "d_model d_ff"]):
    return x @ w


def wrong_contraction(x: Float[Tensor, "batch seq d_model"], w: Float[Tensor, "d_ff d_model"]):
    return x @ w


def wrong_einsum(x: Float[Tensor, "batch seq d_model"]):
    return torch.einsum("bsd,de->bse", x)
