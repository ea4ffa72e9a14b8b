"""Contraction chains whose evaluation order matters."""

import numpy as np
import torch


def low_rank_update(a, b, c):
    a = np.zeros((1000, 1000))
    b = np.zeros((1000, 64))
    c = np.zeros((64, 10))
    return np.einsum("ij,jk,kl->il", a, b, c)


def low_rank_update_torch():
    a = torch.zeros(1000, 1000)
    b = torch.zeros(1000, 64)
    c = torch.zeros(64, 10)
    return torch.einsum("ij,jk,kl->il", a, b, c)


def low_rank_update_fixed(a, b, c):
    a = np.zeros((1000, 1000))
    b = np.zeros((1000, 64))
    c = np.zeros((64, 10))
    return np.einsum("ij,jk,kl->il", a, b, c, optimize="optimal")
