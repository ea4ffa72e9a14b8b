"""Einsum-heavy code in the style of protein-structure and tensor-network models: triangle
attention over a pair representation, triangle multiplication, and a matrix-product-state
contraction written as one multi-operand einsum."""

import numpy as np
import torch
from jaxtyping import Float
from torch import Tensor


def triangle_attention(
    q: Float[Tensor, "n_res pair_heads n_res c_hidden"],
    k: Float[Tensor, "n_res pair_heads n_res c_hidden"],
    v: Float[Tensor, "n_res pair_heads n_res c_hidden"],
    bias: Float[Tensor, "pair_heads n_res n_res"],
) -> Float[Tensor, "n_res pair_heads n_res c_hidden"]:
    # [n_res, pair_heads, n_res, n_res] logits: cubic in n_res
    logits = torch.einsum("ihqc,ihkc->ihqk", q, k) + bias
    weights = torch.softmax(logits, dim=-1)
    return torch.einsum("ihqk,ihkc->ihqc", weights, v)


def triangle_multiplication_outgoing(
    a: Float[Tensor, "n_res n_res c_z"], b: Float[Tensor, "n_res n_res c_z"]
) -> Float[Tensor, "n_res n_res c_z"]:
    return torch.einsum("ikc,jkc->ijc", a, b)


def mps_overlap(
    left: Float[Tensor, "bond phys bond"],
    site: Float[Tensor, "bond phys bond"],
    right: Float[Tensor, "bond phys bond"],
    env: Float[Tensor, "bond bond"],
) -> Float[Tensor, "phys phys"]:
    # torch contracts left to right: 3x the FLOPs of contracting `env` into `right` first
    return torch.einsum("apb,bqc,crd,ad->pq", left, site, right, env)


def pair_bias_projection(
    weights: Float[np.ndarray, "n_res n_res"],
    pair: Float[np.ndarray, "n_res c_z"],
    projection: Float[np.ndarray, "c_z c_hidden"],
) -> Float[np.ndarray, "n_res c_hidden"]:
    # np.einsum's default optimize=False runs one loop over all four indices
    return np.einsum("ij,jc,ch->ih", weights, pair, projection)
