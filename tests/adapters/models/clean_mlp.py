"""A feed-forward block whose costs are well within budget."""

import torch.nn as nn
from jaxtyping import BFloat16
from torch import Tensor


class MLP(nn.Module):
    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.up = nn.Linear(d_model, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: BFloat16[Tensor, "batch seq d_model"]) -> BFloat16[Tensor, "batch seq d_model"]:
        return self.down(self.up(x).relu())
