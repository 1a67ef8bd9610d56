"""Network building blocks shared by both sides."""
from __future__ import annotations

import math
from typing import Literal

import torch
from torch import nn

Activation = Literal["relu", "tanh"]  # the hidden-layer activations a config may name
ACTIVATIONS: dict[Activation, type[nn.Module]] = {"relu": nn.ReLU, "tanh": nn.Tanh}


class MultiLinear(nn.Module):
    """Linear layer with one weight set per head, or one shared set when n_heads == 1."""

    def __init__(self, n_heads: int, in_features: int, out_features: int, gain: float = math.sqrt(2)) -> None:
        super().__init__()
        self.n_heads = n_heads
        weight = torch.empty(n_heads, out_features, in_features)
        for w in weight:
            nn.init.orthogonal_(w, gain=gain)
        self.weight = nn.Parameter(weight.transpose(1, 2).contiguous())  # [H, in, out]
        self.bias = nn.Parameter(torch.zeros(n_heads, out_features))

    def forward_heads_first(self, x: torch.Tensor) -> torch.Tensor:
        """[H, N, in] -> [H, N, out]: each head's rows through its weights, in one batched GEMM without copies."""
        return torch.baddbmm(self.bias[:, None, :], x, self.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.n_heads == 1:  # one fused multiply-add
            return torch.addmm(self.bias[0], x.reshape(-1, x.shape[-1]), self.weight[0]).view(*x.shape[:-1], -1)
        lead = x.shape[:-2]
        per_head = x.reshape(-1, self.n_heads, x.shape[-1]).transpose(0, 1)  # [H, N, in]
        out = torch.baddbmm(self.bias[:, None, :], per_head, self.weight)  # one batched GEMM over heads
        return out.transpose(0, 1).reshape(*lead, self.n_heads, -1)


class MultiLayerNorm(nn.Module):
    """LayerNorm over the feature axis of x [..., H, features] with one affine pair per head, or one shared pair
    when n_heads == 1 (as MultiLinear): per-agent networks keep per-agent normalisers."""

    def __init__(self, n_heads: int, features: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.features, self.eps = (features,), eps
        self.weight = nn.Parameter(torch.ones(n_heads, features))
        self.bias = nn.Parameter(torch.zeros(n_heads, features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.weight.shape[0] == 1:  # shared: torch's fused affine LayerNorm
            return nn.functional.layer_norm(x, self.features, self.weight[0], self.bias[0], self.eps)
        return nn.functional.layer_norm(x, self.features, eps=self.eps) * self.weight + self.bias


def set_lr(optimizer: torch.optim.Optimizer, *lrs: float) -> None:
    """Set the learning rate of each parameter group (one value for all, or one per group): after loading an
    optimizer's state, the run's config, not the checkpoint, decides the learning rate."""
    groups = optimizer.param_groups
    for group, lr in zip(groups, lrs * len(groups) if len(lrs) == 1 else lrs, strict=True):
        group["lr"] = lr
