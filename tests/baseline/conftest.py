"""A small nanoGPT-style model (written for these tests) in a project with a tensorcost.yaml."""

from __future__ import annotations

import pytest

MODEL = '''import torch
import torch.nn as nn
from jaxtyping import Float
from torch import Tensor
from torch.nn import functional as F


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)

    def forward(self, x: Float[Tensor, "B T n_embd"]):
        h = F.gelu(self.c_fc(x))
        return self.c_proj(h)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.n_head = config.n_head

    def forward(self, x: Float[Tensor, "B T n_embd"]):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, n_head, T, hs)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, n_head, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, n_head, T, hs)
        att = q @ k.transpose(-2, -1)
        att = F.softmax(att, dim=-1)
        return att @ v
'''
CONFIG = "dims: {B: 2, T: 100, n_embd: 32, n_head: 4, hs: 8}\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / ".git").mkdir()  # the repository root: config discovery stops here
    (tmp_path / "tensorcost.yaml").write_text(CONFIG)
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path
