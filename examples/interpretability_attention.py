"""Attention in the TransformerLens idiom: jaxtyping annotations on every tensor, einops for the
head rearrangements, and the attention pattern materialized on purpose so it can be inspected."""

import einops
import numpy as np
import torch
import torch.nn as nn
from jaxtyping import Float
from torch import Tensor

Scores = Float[Tensor, "batch head_index query_pos key_pos"]


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.W_Q = nn.Parameter(torch.empty(cfg.n_heads, cfg.d_model, cfg.d_head))
        self.W_K = nn.Parameter(torch.empty(cfg.n_heads, cfg.d_model, cfg.d_head))
        self.W_V = nn.Parameter(torch.empty(cfg.n_heads, cfg.d_model, cfg.d_head))
        self.W_O = nn.Parameter(torch.empty(cfg.n_heads, cfg.d_head, cfg.d_model))
        self.attn_scale = np.sqrt(cfg.d_head)

    def calculate_attention_scores(
        self,
        q: Float[Tensor, "batch query_pos head_index d_head"],
        k: Float[Tensor, "batch key_pos head_index d_head"],
    ) -> Scores:
        q_ = einops.rearrange(q, "batch query_pos head_index d_head -> batch head_index query_pos d_head")
        k_ = einops.rearrange(k, "batch key_pos head_index d_head -> batch head_index d_head key_pos")
        attn_scores = q_ @ k_ / self.attn_scale
        return attn_scores

    def calculate_z_scores(
        self,
        v: Float[Tensor, "batch key_pos head_index d_head"],
        pattern: Float[Tensor, "batch head_index query_pos key_pos"],
    ) -> Float[Tensor, "batch query_pos head_index d_head"]:
        z = einops.einsum(
            v,
            pattern,
            "batch key_pos head_index d_head, batch head_index query_pos key_pos -> batch query_pos head_index d_head",
        )
        return z

    def project_output(
        self, z: Float[Tensor, "batch pos head_index d_head"]
    ) -> Float[Tensor, "batch pos d_model"]:
        return einops.einsum(
            z, self.W_O, "batch pos head_index d_head, head_index d_head d_model -> batch pos d_model"
        )


def unembed(
    residual: Float[Tensor, "batch pos d_model"], W_U: Float[Tensor, "d_model d_vocab"]
) -> Float[Tensor, "batch pos d_vocab"]:
    # full-vocabulary logits for every position: [8, 8192, 128256] floats
    return residual @ W_U


def head_attribution(pattern: Scores, head_out: Float[Tensor, "batch head_index query_pos d_model"]):
    # a stale annotation: the per-head outputs are per key position, not per query position
    mixed: Float[Tensor, "batch query_pos d_model"] = torch.einsum("bhqk,bhqd->bhkd", pattern, head_out)
    return mixed
